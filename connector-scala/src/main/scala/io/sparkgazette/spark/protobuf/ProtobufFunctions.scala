package io.sparkgazette.spark.protobuf

import java.util.Locale

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.types.{LongType, StringType}
import org.apache.spark.sql.{Column, SparkSession, functions}

/** Decoding protobuf payloads (for example of `application/x-protobuf-fixed` journals) into
  * structs, given a descriptor set file; needs nothing on the cluster beyond the connector.
  *
  * {{{
  *   import io.sparkgazette.spark.protobuf.ProtobufFunctions.fromProtobuf
  *   df.select(fromProtobuf(df("value"), "demo.Event", "/path/event.desc"))
  * }}}
  */
object ProtobufFunctions {

  /** `value` decoded as `messageName`; a payload that does not parse fails the query. */
  def fromProtobuf(value: Column, messageName: String, descriptorFile: String): Column =
    fromProtobuf(value, functions.lit(null).cast(StringType), functions.lit(null).cast(LongType), messageName,
      descriptorFile, "FAILFAST")

  /** `value` decoded as `messageName`, with the message's `journal` and `begin` offset (the
    * source's columns of those names) for errors. `mode` is `FAILFAST` (a payload that does not
    * parse fails the query, naming its journal and offset) or `PERMISSIVE` (it becomes null).
    */
  def fromProtobuf(value: Column, journal: Column, begin: Column, messageName: String, descriptorFile: String,
      mode: String): Column = {
    val d = decoder(SparkSession.active, messageName, descriptorFile, mode)
    functions.udf(d, d.schema).apply(value, journal, begin)
  }

  /** Registers the decoder as the function `name(value, journal, begin)` of `spark`, for callers
    * that cannot pass columns across (Python through py4j); returns its schema as JSON.
    */
  def register(spark: SparkSession, name: String, messageName: String, descriptorFile: String, mode: String): String = {
    val d = decoder(spark, messageName, descriptorFile, mode)
    val schema = d.schema
    spark.udf.register(name, functions.udf(d, schema))
    schema.json
  }

  private[protobuf] def decoder(spark: SparkSession, messageName: String, descriptorFile: String, mode: String)
      : ProtobufDecoder = {
    val permissive = mode.toUpperCase(Locale.ROOT) match {
      case "FAILFAST" => false
      case "PERMISSIVE" => true
      case _ => throw ProtobufErrors.invalidArgument("mode", mode, "FAILFAST or PERMISSIVE")
    }
    new ProtobufDecoder(messageName, read(spark, descriptorFile), descriptorFile, permissive)
  }

  // Through Hadoop's file systems, so a set on HDFS or object storage works as well as a local one.
  private[spark] def read(spark: SparkSession, file: String): Array[Byte] = {
    val path = new Path(file)
    val fs = path.getFileSystem(spark.sparkContext.hadoopConfiguration)
    val in = try fs.open(path)
    catch {
      case e: java.io.IOException => throw ProtobufErrors.badDescriptorSet(file, s"it cannot be read (${e.getMessage})")
    }
    try in.readAllBytes()
    finally in.close()
  }
}
