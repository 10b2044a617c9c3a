package io.sparkgazette.spark

/** Every error the connector raises to users: a stable condition (`GAZETTE_…`), its SQLSTATE and
  * the named parts of the message, worded by the templates of `error-conditions.json`. Below
  * everything that raises them: it uses no other package of the connector's Spark layer.
  */
package object errors
