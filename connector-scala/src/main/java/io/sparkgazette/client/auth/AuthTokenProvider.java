package io.sparkgazette.client.auth;

import java.util.Map;

/**
 * Supplies the bearer tokens (JWTs) the connector sends to brokers that check them
 * ({@code --broker.auth-keys}), for tokens that a control plane mints with short lifetimes.
 *
 * <p>The option {@code authTokenProvider} names the implementing class. The connector makes one
 * instance per class and settings in each JVM that talks to the brokers (the driver and every
 * executor), through its public no-argument constructor, calls {@link #configure} once, and then
 * {@link #token} whenever it needs a token: the first time, when the token it holds has used up
 * four fifths of its lifetime (from when it got it to the JWT's {@code exp}), and when a broker
 * refused it (UNAUTHENTICATED), before the refused call is tried again. It keeps the token in
 * between, and calls one method at a time per instance.
 *
 * <p>The connector never logs or shows a token. A provider should not either.
 *
 * <pre>{@code
 * public final class VaultTokens implements AuthTokenProvider {
 *   private String path;
 *   public void configure(Map<String, String> options) {
 *     path = options.get("authTokenProvider.path");
 *   }
 *   public String token(boolean refused) throws Exception {
 *     return fetchFromVault(path); // a JWT signed with one of the brokers' keys
 *   }
 * }
 * }</pre>
 */
public interface AuthTokenProvider {

  /**
   * Called once, before the first {@link #token}, with the provider's own settings: the options of
   * the read or write named {@code authTokenProvider.<setting>} (as given, with the session's
   * defaults), which the connector accepts and shows redacted. Reads and writes with the same
   * settings share one instance per JVM.
   */
  default void configure(Map<String, String> options) {}

  /**
   * A token valid now: {@code Bearer} is added by the connector.
   *
   * @param refused true when a broker refused the token this provider returned last (it expired
   *     or its key was retired): return a new one, not one cached by the provider
   * @throws Exception when no token can be had; the RPC that needed it fails, naming the provider
   *     (its message is not shown: it may hold a secret). A call that takes longer than 30 seconds
   *     fails the same way.
   */
  String token(boolean refused) throws Exception;
}
