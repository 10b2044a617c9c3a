package io.sparkgazette.spark
package errors

import java.util.Locale

/** The errors of options: unknown, missing, invalid or conflicting ones, and journals they name
  * that do not exist. Secrets (`authToken`, and a token provider's settings `authTokenProvider.*`)
  * are never shown: in errors, and in plans and logs through [[describe]], their values read as
  * redacted. `authTokenFile` is a path, shown; the token in it never is.
  */
private[errors] trait OptionErrors {

  private val SecretOptions = Set("authtoken")
  private val Redacted = "*********(redacted)"

  private def secret(option: String): Boolean = {
    val lower = option.toLowerCase(Locale.ROOT)
    SecretOptions.contains(lower) || lower.startsWith("authtokenprovider.")
  }

  /** `known` are the connector's options, listed; `others` (Spark's own) are only suggested. */
  private[spark] def unknownOption(name: String, known: Iterable[String], others: Iterable[String] = Nil)
      : GazetteIllegalArgumentException = {
    val listed = Map("option" -> name, "knownOptions" -> known.toSeq.sorted.mkString(", "))
    closest(name, known ++ others) match {
      case Some(likely) =>
        GazetteIllegalArgumentException("GAZETTE_UNKNOWN_OPTION.WITH_SUGGESTION", listed + ("suggestion" -> likely))
      case None => GazetteIllegalArgumentException("GAZETTE_UNKNOWN_OPTION.WITHOUT_SUGGESTION", listed)
    }
  }

  /** The known option `name` is most likely a misspelling of: at most two edits away, ignoring case. */
  private[errors] def closest(name: String, known: Iterable[String]): Option[String] = {
    def distance(a: String, b: String): Int = {
      val (x, y) = (a.toLowerCase(Locale.ROOT), b.toLowerCase(Locale.ROOT))
      var row = Array.tabulate(y.length + 1)(identity)
      for (i <- 1 to x.length) {
        val next = new Array[Int](y.length + 1)
        next(0) = i
        for (j <- 1 to y.length)
          next(j) = math.min(math.min(next(j - 1), row(j)) + 1, row(j - 1) + (if (x(i - 1) == y(j - 1)) 0 else 1))
        row = next
      }
      row(y.length)
    }
    known.toSeq.map(k => k -> distance(name, k)).filter(_._2 <= 2).sortBy { case (k, d) => (d, k) }.headOption.map(_._1)
  }

  private[spark] def unknownSessionOption(name: String, sessionConf: String, known: Iterable[String])
      : GazetteIllegalArgumentException =
    GazetteIllegalArgumentException("GAZETTE_UNKNOWN_OPTION.SESSION",
      Map("option" -> name, "sessionConf" -> sessionConf, "knownOptions" -> known.toSeq.sorted.mkString(", ")))

  private[spark] def missingOption(name: String, why: String): GazetteIllegalArgumentException =
    GazetteIllegalArgumentException("GAZETTE_MISSING_OPTION.REQUIRED", Map("option" -> name, "reason" -> why))

  /** Neither of two options that say the same thing in different ways is set. */
  private[spark] def missingOneOf(name: String, alternative: String, why: String): GazetteIllegalArgumentException =
    GazetteIllegalArgumentException("GAZETTE_MISSING_OPTION.ONE_OF_TWO",
      Map("option" -> name, "alternative" -> alternative, "reason" -> why))

  private[spark] def invalidOption(name: String, value: String, expected: String): GazetteIllegalArgumentException =
    if (secret(name)) invalidSecret(name, expected)
    else GazetteIllegalArgumentException("GAZETTE_INVALID_OPTION.VALUE",
      Map("option" -> name, "value" -> value, "expected" -> expected))

  private[spark] def invalidSecret(name: String, expected: String): GazetteIllegalArgumentException =
    GazetteIllegalArgumentException("GAZETTE_INVALID_OPTION.SECRET",
      Map("option" -> name, "value" -> Redacted, "expected" -> expected))

  private[spark] def conflictingOptions(a: String, b: String): GazetteIllegalArgumentException =
    GazetteIllegalArgumentException("GAZETTE_CONFLICTING_OPTIONS.TWO_OPTIONS", Map("option" -> a, "otherOption" -> b))

  private[spark] def noJournals(target: String): GazetteIllegalStateException =
    GazetteIllegalStateException("GAZETTE_NO_JOURNALS", Map("target" -> target))

  private[spark] def unknownJournal(journal: String, option: String): GazetteIllegalArgumentException =
    GazetteIllegalArgumentException(
      "GAZETTE_UNKNOWN_JOURNAL.NOT_SELECTED", Map("journal" -> journal, "option" -> option))

  /** `journal`, which the user named (in `option`, if through one), is not listed by the brokers. */
  private[spark] def missingJournal(journal: String, option: Option[String]): GazetteIllegalArgumentException =
    option match {
      case Some(o) =>
        GazetteIllegalArgumentException("GAZETTE_UNKNOWN_JOURNAL.MISSING_FROM_OPTION",
          Map("journal" -> journal, "option" -> o))
      case None => GazetteIllegalArgumentException("GAZETTE_UNKNOWN_JOURNAL.MISSING", Map("journal" -> journal))
    }

  private[spark] def invalidJournalSpec(journal: String, field: String, value: String, expected: String)
      : GazetteIllegalArgumentException =
    GazetteIllegalArgumentException("GAZETTE_INVALID_JOURNAL_SPEC",
      Map("journal" -> journal, "field" -> field, "value" -> value, "expected" -> expected))

  /** Options as a plan or a log shows them: secrets (authToken, authTokenProvider.*) redacted. */
  private[spark] def describe(options: Map[String, String]): String =
    options.toSeq.sorted.map { case (k, v) => s"$k=${if (secret(k)) Redacted else v}" }.mkString(", ")
}
