package io.sparkgazette.spark
package source
package rows

import io.sparkgazette.message.{Envelope, Flags, ProducerId, RawMessage, Uuid}
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

class MessageToRowSuite extends AnyFunSuite {
  private val producer = ProducerId(0x0123456789abL)
  private val clock = 0x1ef0000000000010L
  private val uuid = Uuid.build(producer, clock, Flags.ContinueTxn)
  private val env = Envelope("a/b", 10L, 20L, producer, clock, Flags.ContinueTxn, new RawMessage("{}".getBytes, uuid))
  private val labels = Some(Map("app" -> Seq("x")))

  private def values(columns: Seq[String]): Seq[Any] = {
    val row = new MessageToRow.Converter("a/b", labels, columns)(env).asInstanceOf[GenericInternalRow]
    row.toSeq(org.apache.spark.sql.types.StructType(columns.map(MessageToRow.schema(includeLabels = true)(_))))
  }

  test("a row holds the columns asked for, in the order asked, and nothing else") {
    assert(values(Seq("begin", "journal")) == Seq[Any](10L, UTF8String.fromString("a/b")))
    assert(values(Seq("producer", "end")) == Seq[Any](UTF8String.fromString("0123456789ab"), 20L))
    assert(values(Nil) == Nil)
  }

  test("a row of every column carries what the message's UUID says") {
    val all = MessageToRow.schema(includeLabels = true).fieldNames.toSeq
    val row = values(all)
    assert(row.size == all.size)
    assert(row(all.indexOf("uuid")) == UTF8String.fromString(uuid.toString))
    assert(row(all.indexOf("clock")) == clock)
  }

  test("pruning keeps the schema's order and types, whatever order Spark asks in") {
    val all = MessageToRow.schema(includeLabels = true)
    val pruned =
      MessageToRow.pruned(includeLabels = true, org.apache.spark.sql.types.StructType(Seq(all("labels"), all("begin"))))
    assert(pruned.fieldNames.toSeq == Seq("begin", "labels"))
  }

  test("an unknown column, or labels without them, is refused") {
    intercept[IllegalArgumentException](new MessageToRow.Converter("a/b", labels, Seq("nope")))
    intercept[IllegalArgumentException](new MessageToRow.Converter("a/b", None, Seq("labels")))
  }

  test("a producer is twelve hex digits") {
    assert(ProducerId(0x1L).toString == "000000000001")
    assert(ProducerId(0xffffffffffffL).toString == "ffffffffffff")
  }
}
