package io.sparkgazette.client.auth

/** A credential (a bearer token) that never shows itself: its string form is a placeholder, so
  * that configs holding it can be logged, printed in errors and shown in plans.
  */
final class Secret(val value: String) extends Serializable {
  override def toString: String = "Secret(redacted)"
  override def equals(other: Any): Boolean = other match {
    case s: Secret => s.value == value
    case _ => false
  }
  override def hashCode: Int = value.hashCode
}
