package io.sparkgazette.spark
package runtime

import java.io.{DataInputStream, DataOutputStream, ObjectInputStream, ObjectOutputStream}

import com.esotericsoftware.kryo.io.{Input, Output}
import com.esotericsoftware.kryo.{Kryo, KryoSerializable}
import org.apache.hadoop.conf.Configuration

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
