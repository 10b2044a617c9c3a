package io.sparkgazette.spark.source

/** What a source query asks for and where it stands: its options, offsets per journal, and the
  * journal ranges a batch plans, with the saved states they start from.
  */
package object offsets
