package io.sparkgazette.spark.hadoop

import org.apache.hadoop.conf.Configuration
import org.apache.spark.SparkConf
import org.apache.spark.serializer.{JavaSerializer, KryoSerializer, Serializer}
import org.scalatest.funsuite.AnyFunSuite

/** The Hadoop configuration reaches executors whichever serializer the cluster uses: the source
  * and the sink broadcast it, and a broadcast goes with `spark.serializer`.
  */
class SerializableConfigurationSuite extends AnyFunSuite {
  private def roundTrip(serializer: Serializer): Configuration = {
    val conf = new Configuration(false)
    conf.set("fs.defaultFS", "file:///")
    conf.set("sparkgazette.test", "a value")
    val s = serializer.newInstance()
    s.deserialize[SerializableConfiguration](s.serialize(new SerializableConfiguration(conf))).value
  }

  for ((name, serializer) <- Seq(
      "Java" -> (() => new JavaSerializer(new SparkConf())),
      "Kryo" -> (() => new KryoSerializer(new SparkConf())),
      "Kryo with registration required" ->
        (() =>
          new KryoSerializer(new SparkConf()
              .set("spark.kryo.registrationRequired", "true")
              .set("spark.kryo.classesToRegister", classOf[SerializableConfiguration].getName)))
    )) {
    test(s"a configuration crosses $name serialization whole") {
      val conf = roundTrip(serializer())
      assert(conf != null)
      assert(conf.get("sparkgazette.test") == "a value")
      assert(conf.get("fs.defaultFS") == "file:///")
    }
  }
}
