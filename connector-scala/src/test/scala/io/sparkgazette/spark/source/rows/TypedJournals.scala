package io.sparkgazette.spark
package source
package rows

import io.sparkgazette.message.Framing
import io.sparkgazette.testing.{Journals, SparkClusterSuite}
import org.apache.spark.sql.DataFrameReader

/** Journals of a content type, and batch readers of them typed by a schema. */
private[source] trait TypedJournals { self: SparkClusterSuite =>

  protected def journal(name: String, contentType: String = Framing.JsonLines): String = {
    Journals.create(client, Journals.spec(name, labels = Seq("content-type" -> contentType)))
    name
  }

  protected def reader(journal: String, schema: String, options: (String, String)*): DataFrameReader =
    spark.read.format("gazette").option("broker", cluster.broker).option("journals", journal)
      .options(options.toMap).schema(schema)
}
