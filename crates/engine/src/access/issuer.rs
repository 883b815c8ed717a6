//! OAuth resource-server mode: access tokens issued by the organisation's authorization server
//! (`"http": {"issuer", "audience"}` in the configuration) are accepted as JWTs checked against
//! the issuer's published keys (JWKS): signature (asymmetric algorithms only), `iss`, `aud`,
//! `exp`/`nbf` (30 s leeway). The token's `scope` (or `scp`) names Offload's scopes — `read`,
//! `call`, `store`, also written `offload:read` and so on; others are ignored.
//!
//! The keys are found through the issuer's metadata (RFC 8414, or OpenID discovery) and cached;
//! a token signed with a key not seen yet fetches them again (at most every 30 s, so garbage
//! tokens cannot make Offload hammer the issuer).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;

use super::{Grant, Scope};

/// How often the keys may be fetched again for an unknown key ID.
const REFETCH_AFTER: Duration = Duration::from_secs(30);
/// How long fetching metadata or keys may take.
const FETCH_WAIT: Duration = Duration::from_secs(10);

/// The issuer whose tokens are accepted, and its keys.
pub struct Issuer {
    issuer: String,
    audience: String,
    keys: tokio::sync::Mutex<Keys>,
    http: reqwest::Client,
}

#[derive(Default)]
struct Keys {
    set: Option<JwkSet>,
    fetched: Option<Instant>,
}

#[derive(Deserialize)]
struct Claims {
    #[serde(default)]
    sub: Option<String>,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    scope: Option<String>,
    /// Some issuers (Azure AD, Okta) name the scopes in an array.
    #[serde(default)]
    scp: Option<ScopeClaim>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ScopeClaim {
    Words(String),
    List(Vec<String>),
}

/// Why a bearer JWT was refused (said in the log and the 401; never the token).
#[derive(Debug, PartialEq, Eq)]
pub struct Refused(pub String);

impl Issuer {
    pub fn new(issuer: &str, audience: &str) -> Self {
        Self {
            issuer: issuer.to_owned(),
            audience: audience.to_owned(),
            keys: tokio::sync::Mutex::default(),
            http: crate::crypto::http_client()
                .timeout(FETCH_WAIT)
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap_or_default(),
        }
    }

    /// An issuer with fixed keys (tests).
    pub fn with_keys(issuer: &str, audience: &str, keys: JwkSet) -> Self {
        let me = Self::new(issuer, audience);
        {
            let mut held = me.keys.try_lock().expect("new");
            held.set = Some(keys);
            held.fetched = Some(Instant::now());
        }
        me
    }

    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    pub fn audience(&self) -> &str {
        &self.audience
    }

    /// The protected-resource metadata (RFC 9728) Offload serves.
    pub fn metadata(&self) -> serde_json::Value {
        serde_json::json!({
            "resource": self.audience,
            "authorization_servers": [self.issuer],
            "scopes_supported": Scope::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
            "bearer_methods_supported": ["header"],
            "resource_name": "Offload",
        })
    }

    /// Where the metadata is served: `/.well-known/oauth-protected-resource` followed by the
    /// audience URL's path (RFC 9728 §3.1), on the audience's origin.
    pub fn metadata_url(&self) -> String {
        match url::Url::parse(&self.audience) {
            Ok(url) => {
                let path = url.path().trim_end_matches('/');
                format!(
                    "{}/.well-known/oauth-protected-resource{path}",
                    url.origin().ascii_serialization()
                )
            }
            Err(_) => self.audience.clone(),
        }
    }

    /// Checks a bearer token; the grant names the token's subject (or client).
    pub async fn verify(&self, token: &str) -> Result<Grant, Refused> {
        let refused = |why: &str| Refused(why.to_owned());
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| refused("the token is not a JWT from the configured issuer"))?;
        if matches!(
            header.alg,
            Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512
        ) {
            return Err(refused(
                "tokens signed with a shared secret are not accepted",
            ));
        }
        let key = self.key(header.kid.as_deref(), header.alg).await?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.leeway = 30;
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        let data = jsonwebtoken::decode::<Claims>(token, &key, &validation).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind;
            Refused(
                match e.kind() {
                    ErrorKind::ExpiredSignature => "the token has expired",
                    ErrorKind::InvalidAudience => "the token is for another resource (audience)",
                    ErrorKind::InvalidIssuer => "the token is from another issuer",
                    ErrorKind::ImmatureSignature => "the token is not valid yet",
                    ErrorKind::InvalidSignature => "the token's signature does not verify",
                    _ => "the token is not valid",
                }
                .to_owned(),
            )
        })?;
        let claims = data.claims;
        let words: Vec<String> = match (&claims.scope, &claims.scp) {
            (Some(s), _) => s.split_whitespace().map(str::to_owned).collect(),
            (None, Some(ScopeClaim::Words(s))) => s.split_whitespace().map(str::to_owned).collect(),
            (None, Some(ScopeClaim::List(l))) => l.clone(),
            (None, None) => Vec::new(),
        };
        let scopes: BTreeSet<Scope> = words
            .iter()
            .filter_map(|w| {
                let w = w.strip_prefix("offload:").unwrap_or(w);
                Scope::ALL.into_iter().find(|s| s.as_str() == w)
            })
            .collect();
        let who = claims
            .sub
            .or(claims.client_id)
            .unwrap_or_else(|| "oauth".to_owned());
        Ok(Grant {
            who: format!("oauth:{who}"),
            scopes,
        })
    }

    /// The key `kid` names (or the only key for `alg` when there is no `kid`). The lock is held
    /// only to look and to store: a slow or down issuer delays only the request that fetches,
    /// never those whose key is known.
    async fn key(&self, kid: Option<&str>, alg: Algorithm) -> Result<DecodingKey, Refused> {
        let unknown =
            || Refused("the token is signed with a key the issuer does not publish".into());
        {
            let mut keys = self.keys.lock().await;
            if let Some(key) = keys.set.as_ref().and_then(|set| find(set, kid, alg)) {
                return Ok(key);
            }
            if keys.fetched.is_some_and(|t| t.elapsed() < REFETCH_AFTER) {
                return Err(unknown());
            }
            keys.fetched = Some(Instant::now());
        }
        let set = self.fetch_keys().await.map_err(|e| {
            tracing::warn!("cannot fetch the signing keys of {}: {e}", self.issuer);
            Refused("the issuer's signing keys cannot be fetched right now".into())
        })?;
        let key = find(&set, kid, alg);
        self.keys.lock().await.set = Some(set);
        key.ok_or_else(unknown)
    }

    /// The issuer's JWKS, found through its metadata.
    async fn fetch_keys(&self) -> Result<JwkSet, String> {
        let issuer = self.issuer.trim_end_matches('/');
        let parsed = url::Url::parse(issuer).map_err(|e| e.to_string())?;
        let origin = parsed.origin().ascii_serialization();
        let path = parsed.path().trim_end_matches('/');
        let candidates = [
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{issuer}/.well-known/openid-configuration"),
        ];
        let mut last = String::from("no metadata found");
        for url in candidates {
            match self.get_json(&url).await {
                Ok(meta) => {
                    if meta.get("issuer").and_then(|i| i.as_str()) != Some(self.issuer.as_str()) {
                        last = format!("{url} names another issuer");
                        continue;
                    }
                    let jwks = meta
                        .get("jwks_uri")
                        .and_then(|u| u.as_str())
                        .ok_or_else(|| format!("{url} has no jwks_uri"))?;
                    let set = self.get_json(jwks).await?;
                    return serde_json::from_value(set).map_err(|e| format!("{jwks}: {e}"));
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    async fn get_json(&self, url: &str) -> Result<serde_json::Value, String> {
        let response = self.http.get(url).send().await.map_err(|e| e.to_string())?;
        if !response.status().is_success() {
            return Err(format!("{url} answered HTTP {}", response.status()));
        }
        response.json().await.map_err(|e| format!("{url}: {e}"))
    }
}

/// The key of `set` that `kid` names, or its only key usable with `alg` when there is no `kid`.
fn find(set: &JwkSet, kid: Option<&str>, alg: Algorithm) -> Option<DecodingKey> {
    let jwk = match kid {
        Some(kid) => set.find(kid)?,
        None => {
            let mut usable = set.keys.iter().filter(|k| {
                k.common
                    .key_algorithm
                    .is_none_or(|a| a.to_string() == format!("{alg:?}"))
            });
            let only = usable.next()?;
            usable.next().is_none().then_some(only)?
        }
    };
    DecodingKey::from_jwk(jwk).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use jsonwebtoken::{EncodingKey, Header};
    use ring::signature::{Ed25519KeyPair, KeyPair};

    const ISSUER: &str = "https://login.example.com";
    const AUDIENCE: &str = "https://offload.example.com/mcp";

    struct Signer {
        key: EncodingKey,
        jwks: JwkSet,
    }

    fn signer(kid: &str) -> Signer {
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&ring::rand::SystemRandom::new()).unwrap();
        let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
        let x = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(pair.public_key().as_ref());
        let jwks: JwkSet = serde_json::from_value(serde_json::json!({"keys": [
            {"kty": "OKP", "crv": "Ed25519", "x": x, "kid": kid, "alg": "EdDSA", "use": "sig"}
        ]}))
        .unwrap();
        Signer {
            key: EncodingKey::from_ed_der(pkcs8.as_ref()),
            jwks,
        }
    }

    fn token(signer: &Signer, kid: &str, claims: serde_json::Value) -> String {
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = Some(kid.to_owned());
        jsonwebtoken::encode(&header, &claims, &signer.key).unwrap()
    }

    fn now() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
    }

    #[tokio::test]
    async fn a_token_from_the_issuer_for_offload_grants_its_scopes() {
        let s = signer("k1");
        let issuer = Issuer::with_keys(ISSUER, AUDIENCE, s.jwks.clone());
        let good = serde_json::json!({"iss": ISSUER, "aud": AUDIENCE, "exp": now() + 300,
            "sub": "alice", "scope": "openid read offload:call unrelated"});
        let grant = issuer.verify(&token(&s, "k1", good)).await.unwrap();
        assert_eq!(grant.who, "oauth:alice");
        assert_eq!(
            grant.scopes,
            [Scope::Read, Scope::Call]
                .into_iter()
                .collect::<BTreeSet<_>>()
        );
        // Scopes as an array (`scp`), an audience list that includes Offload.
        let listed = serde_json::json!({"iss": ISSUER, "aud": ["other", AUDIENCE],
            "exp": now() + 300, "client_id": "ci", "scp": ["store"]});
        let grant = issuer.verify(&token(&s, "k1", listed)).await.unwrap();
        assert_eq!(grant.who, "oauth:ci");
        assert!(grant.scopes.contains(&Scope::Store));
    }

    #[tokio::test]
    async fn wrong_issuer_audience_expiry_key_or_algorithm_is_refused_in_words() {
        let s = signer("k1");
        let issuer = Issuer::with_keys(ISSUER, AUDIENCE, s.jwks.clone());
        let claims = |iss: &str, aud: &str, exp: u64| serde_json::json!({"iss": iss, "aud": aud, "exp": exp, "sub": "x", "scope": "read"});
        let cases = [
            (
                token(
                    &s,
                    "k1",
                    claims("https://evil.example", AUDIENCE, now() + 300),
                ),
                "another issuer",
            ),
            (
                token(
                    &s,
                    "k1",
                    claims(ISSUER, "https://elsewhere/mcp", now() + 300),
                ),
                "another resource",
            ),
            (
                token(&s, "k1", claims(ISSUER, AUDIENCE, now() - 120)),
                "expired",
            ),
        ];
        for (t, why) in cases {
            let e = issuer.verify(&t).await.unwrap_err();
            assert!(e.0.contains(why), "{why}: {e:?}");
        }
        // Signed by a key the issuer does not publish (the key set was just fetched: no refetch).
        let stranger = signer("k1");
        let forged = token(&stranger, "k1", claims(ISSUER, AUDIENCE, now() + 300));
        assert!(
            issuer
                .verify(&forged)
                .await
                .unwrap_err()
                .0
                .contains("signature")
        );
        // A shared-secret token is never accepted, whatever it says.
        let hs = jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &claims(ISSUER, AUDIENCE, now() + 300),
            &EncodingKey::from_secret(b"guessable"),
        )
        .unwrap();
        assert!(
            issuer
                .verify(&hs)
                .await
                .unwrap_err()
                .0
                .contains("shared secret")
        );
        for garbage in ["", "abc", "a.b.c", "eyJhbGciOiJub25lIn0.e30."] {
            assert!(issuer.verify(garbage).await.is_err(), "{garbage}");
        }
    }

    #[tokio::test]
    async fn an_issuer_that_hangs_delays_only_the_request_that_fetches_its_keys() {
        // An "issuer" that accepts connections and never answers.
        let hung = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = hung.local_addr().unwrap();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = hung.accept().await {
                held.push(socket);
            }
        });
        let iss = format!("http://{addr}");
        let s = signer("known");
        let issuer = std::sync::Arc::new(Issuer::with_keys(&iss, AUDIENCE, s.jwks.clone()));
        issuer.keys.lock().await.fetched = None;
        let claims =
            serde_json::json!({"iss": iss, "aud": AUDIENCE, "exp": now() + 300, "scope": "read"});
        let unknown = token(&signer("new"), "new", claims.clone());
        let fetching = {
            let issuer = issuer.clone();
            tokio::spawn(async move { issuer.verify(&unknown).await })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        let started = Instant::now();
        let known = issuer.verify(&token(&s, "known", claims)).await;
        assert!(known.is_ok(), "{known:?}");
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
        assert!(
            !fetching.is_finished(),
            "the fetch is still waiting on the hung issuer"
        );
        fetching.abort();
    }

    #[test]
    fn the_metadata_names_the_issuer_and_lives_under_the_audience_path() {
        let issuer = Issuer::new(ISSUER, AUDIENCE);
        assert_eq!(
            issuer.metadata_url(),
            "https://offload.example.com/.well-known/oauth-protected-resource/mcp"
        );
        let m = issuer.metadata();
        assert_eq!(m["resource"], AUDIENCE);
        assert_eq!(m["authorization_servers"][0], ISSUER);
    }
}
