package io.sparkgazette.spark
package hadoop

import java.io.{DataInputStream, DataOutputStream, ObjectInputStream, ObjectOutputStream}

import com.esotericsoftware.kryo.io.{Input, Output}
import com.esotericsoftware.kryo.{Kryo, KryoSerializable}
import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession

/** A Hadoop configuration that travels to executors inside a partition or factory, or in a
  * broadcast. A broadcast goes with `spark.serializer`, Kryo on many clusters, which skips the
  * transient field and the Java hooks: both ways are written here, or executors get null.
  */
private[spark] final class SerializableConfiguration(@transient var value: Configuration)
    extends Serializable with KryoSerializable {
  private def writeObject(out: ObjectOutputStream): Unit = {
    out.defaultWriteObject()
    value.write(out)
  }

  private def readObject(in: ObjectInputStream): Unit = {
    in.defaultReadObject()
    value = new Configuration(false)
    value.readFields(in)
  }

  override def write(kryo: Kryo, output: Output): Unit = {
    val out = new DataOutputStream(output)
    value.write(out)
    out.flush()
  }

  override def read(kryo: Kryo, input: Input): Unit = {
    value = new Configuration(false)
    value.readFields(new DataInputStream(input))
  }
}

private[spark] object SerializableConfiguration {

  /** The session's Hadoop configuration, as Spark builds it for its own checkpoint: credentials
    * set with spark.conf.set reach the connector's files in the checkpoint too.
    */
  def ofSession(spark: SparkSession): SerializableConfiguration = {
    val conf = new Configuration(spark.sparkContext.hadoopConfiguration)
    spark.conf.getAll.foreach { case (k, v) => if (v != null) conf.set(k, v) }
    new SerializableConfiguration(conf)
  }
}
