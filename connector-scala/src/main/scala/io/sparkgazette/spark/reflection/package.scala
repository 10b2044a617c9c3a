package io.sparkgazette.spark

/** What Spark hands a connector no API for, found through its classes by name: the execution of a
  * running query, and whether this Spark has real-time mode.
  */
package object reflection
