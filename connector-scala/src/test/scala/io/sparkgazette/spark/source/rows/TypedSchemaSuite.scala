package io.sparkgazette.spark
package source
package rows

import io.sparkgazette.spark.errors.GazetteIllegalArgumentException
import io.sparkgazette.spark.testing.SparkThrowables.condition
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

/** The typed rows' schema: what a table schema means, what a schema may not hold, and what a
  * query's pruning leaves to parse and to build.
  */
class TypedSchemaSuite extends AnyFunSuite {
  private val corrupt = TypedSchema.DefaultCorruptColumn
  private def of(ddl: String, labels: Boolean = false) =
    TypedSchema.of(StructType.fromDDL(ddl), labels, corrupt)

  test("the untyped schema is no schema; a user's schema gets the connector's struct after its fields") {
    assert(TypedSchema.of(MessageToRow.schema(includeLabels = false), includeLabels = false, corrupt).isEmpty)
    val t = of("user STRING, amount INT").get
    assert(t.table.fieldNames.toSeq == Seq("user", "amount", TypedSchema.Meta))
    assert(t.table(TypedSchema.Meta).dataType == MessageToRow.schema(includeLabels = false))
    assert(of("user STRING", labels = true).get.table(TypedSchema.Meta).dataType.asInstanceOf[StructType]
        .fieldNames.contains(MessageToRow.Labels))
    // A table schema the source inferred (a descriptor's) already ends with the struct.
    assert(TypedSchema.of(t.table, includeLabels = false, corrupt).get == t)
  }

  test("a field named like the struct, a field given twice, or a corrupt-record column not a string is refused") {
    def refused(ddl: String, words: String*) = {
      val e = intercept[GazetteIllegalArgumentException](of(ddl))
      assert(condition(e) == "GAZETTE_INVALID_SCHEMA" && words.forall(e.getMessage.contains), e.getMessage)
    }
    refused("_GAZETTE STRING, a INT", "_GAZETTE")
    refused("a INT, A STRING", "'a'")
    refused("a INT, _corrupt_record INT", "_corrupt_record", "string")
    assert(!of("a INT").get.permissive && of("a INT, _corrupt_record STRING").get.permissive)
  }

  test("pruning: the selected fields in the schema's order, and the struct's selected columns") {
    val t = of("a INT, b STRING, c LONG, _corrupt_record STRING").get
    val meta = StructType(Seq(StructField("begin", LongType), StructField("journal", StringType)))
    val p = t.prune(StructType(Seq(StructField("c", LongType), StructField("a", IntegerType),
          StructField(TypedSchema.Meta, meta))))
    assert(p.fields.fieldNames.toSeq == Seq("a", "c"))
    assert(p.meta.contains(Seq("journal", "begin")), "in the struct's own order")
    assert(p.schema(includeLabels = false).fieldNames.toSeq == Seq("a", "c", TypedSchema.Meta))
    assert(t.prune(StructType(Seq(StructField("b", StringType)))).meta.isEmpty)
    // A query that reads the corrupt-record column parses every field.
    assert(t.prune(StructType(Seq(StructField(corrupt, StringType)))).fields == t.fields)
  }
}
