package io.sparkgazette.testing;

import io.sparkgazette.client.auth.AuthTokenProvider;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.Base64;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * A token provider as a control plane's client would be, minting its own: HS256 JWTs for every
 * journal, signed with the key its file holds at the moment (the test rotates it), living
 * {@code authTokenProvider.ttlSeconds}. Each call is noted in {@code authTokenProvider.callsFile},
 * with the signature of the token it returned.
 */
public final class MintingTokenProvider implements AuthTokenProvider {
  private String keyFile;
  private long ttl;
  private String callsFile;

  @Override
  public void configure(Map<String, String> options) {
    keyFile = options.get("authTokenProvider.keyFile");
    ttl = Long.parseLong(options.getOrDefault("authTokenProvider.ttlSeconds", "30"));
    callsFile = options.get("authTokenProvider.callsFile");
  }

  @Override
  public String token(boolean refused) throws Exception {
    byte[] key = Base64.getDecoder().decode(new String(Files.readAllBytes(Paths.get(keyFile)), StandardCharsets.UTF_8).trim());
    long now = System.currentTimeMillis() / 1000;
    Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
    String head = b64.encodeToString("{\"alg\":\"HS256\",\"typ\":\"JWT\"}".getBytes(StandardCharsets.UTF_8));
    String claims = "{\"cap\":62,\"sel\":{},\"iat\":" + now + ",\"exp\":" + (now + ttl) + "}";
    String body = b64.encodeToString(claims.getBytes(StandardCharsets.UTF_8));
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(key, "HmacSHA256"));
    String sig = b64.encodeToString(mac.doFinal((head + "." + body).getBytes(StandardCharsets.UTF_8)));
    if (callsFile != null) {
      // The signature too: the test looks for every token it minted in the query's logs and plans.
      String call = (refused ? "refused " : "asked ") + sig + "\n";
      Files.write(Paths.get(callsFile), call.getBytes(StandardCharsets.UTF_8), StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    }
    return head + "." + body + "." + sig;
  }
}
