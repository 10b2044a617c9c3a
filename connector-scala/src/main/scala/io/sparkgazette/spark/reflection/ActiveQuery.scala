package io.sparkgazette.spark
package reflection

import java.util.UUID

import scala.util.Try

import org.apache.spark.sql.SparkSession

/** The execution of a running streaming query, which Spark hands no connector: a query runs in a
  * session of its own, whose query manager knows no query, so it is found in the state its
  * sessions share, through Spark's internal classes, by name.
  */
private[spark] object ActiveQuery {

  /** The execution of the active query `queryId`. */
  def find(spark: SparkSession, queryId: String): Try[AnyRef] = Try {
    val shared = spark.getClass.getMethod("sharedState").invoke(spark)
    val active = shared.getClass.getMethod("activeStreamingQueries").invoke(shared)
      .asInstanceOf[java.util.Map[UUID, AnyRef]]
    Option(active.get(UUID.fromString(queryId)))
      .getOrElse(throw new NoSuchElementException(s"no active query $queryId"))
  }

  /** The id of this run of the active query `queryId`: a restart is a new run. */
  def runId(spark: SparkSession, queryId: String): Try[String] =
    find(spark, queryId).map(e => e.getClass.getMethod("runId").invoke(e).toString)
}
