//! A member company's own OpenID provider for the tests: panva's
//! `oidc-provider` (npm), run by `hub/tests/clients/js/oidc_issuer.mjs`
//! (its header says the command line this drives).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::Value;

use super::repo;

/// The OpenID provider process and its command line.
pub struct Issuer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// Its issuer URL (`http://127.0.0.1:PORT`).
    pub url: String,
    /// The `kid` it signs with now.
    pub kid: String,
}

impl Issuer {
    /// Starts it with `clients` (`[{"client_id", "client_secret",
    /// "scope"}]`); a token for no resource names `default_resource`.
    pub fn start(clients: &Value, default_resource: &str) -> Issuer {
        let mut child = Command::new("node")
            .arg(repo().join("hub/tests/clients/js/oidc_issuer.mjs"))
            .arg(clients.to_string())
            .env("OIDC_DEFAULT_RESOURCE", default_resource)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node runs oidc_issuer.mjs (scripts/setup test installs oidc-provider)");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut issuer = Issuer {
            child,
            stdin,
            stdout,
            url: String::new(),
            kid: String::new(),
        };
        let first = issuer.line();
        issuer.url = first["issuer"].as_str().expect("issuer").to_string();
        issuer.kid = first["kid"].as_str().expect("kid").to_string();
        issuer
    }

    /// The next JSON line (oidc-provider prints its own notices between).
    fn line(&mut self) -> Value {
        loop {
            let mut line = String::new();
            let read = self
                .stdout
                .read_line(&mut line)
                .expect("the issuer answers");
            assert!(read > 0, "the issuer stopped");
            if line.starts_with('{') {
                return serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("issuer said {line:?}: {e}"));
            }
        }
    }

    fn command(&mut self, command: &str) -> Value {
        writeln!(self.stdin, "{command}").expect("write to the issuer");
        self.line()
    }

    /// Replaces the signing key; the next tokens carry a new `kid`.
    pub fn rotate(&mut self) {
        let announced = self.command("rotate");
        let kid = announced["kid"].as_str().expect("kid").to_string();
        assert_ne!(kid, self.kid, "a rotation brings a new key");
        self.kid = kid;
    }

    /// `claims` signed with the issuer's real key (a forger who holds it).
    pub fn sign(&mut self, claims: Value) -> String {
        self.command(&format!("sign {claims}"))["token"]
            .as_str()
            .expect("token")
            .to_string()
    }

    /// `claims` signed with a key the issuer never published.
    pub fn sign_foreign(&mut self, claims: Value) -> String {
        self.command(&format!("foreign {claims}"))["token"]
            .as_str()
            .expect("token")
            .to_string()
    }

    /// Lets `people` (`{"id": {claims}}`) log in through the authorization
    /// code flow at the public client `client_id`, redirecting to
    /// `redirect_uri`.
    pub fn allow_logins(&mut self, client_id: &str, redirect_uri: &str, people: &Value) {
        let client = serde_json::json!({"client_id": client_id, "redirect_uris": [redirect_uri]});
        let answer = self.command(&format!("login {client} {people}"));
        assert_eq!(answer["ok"], true, "{answer}");
    }

    /// The next login at the provider is person `id`'s.
    pub fn next_login(&mut self, id: &str) {
        let answer = self.command(&format!("as {id}"));
        assert_eq!(answer["ok"], true, "{answer}");
    }

    /// A client-credentials token, as a client gets one.
    pub async fn token(
        &self,
        client: (&str, &str),
        scope: Option<&str>,
        resource: Option<&str>,
    ) -> String {
        let mut form = vec![("grant_type", "client_credentials")];
        if let Some(scope) = scope {
            form.push(("scope", scope));
        }
        if let Some(resource) = resource {
            form.push(("resource", resource));
        }
        let answer: Value = reqwest::Client::new()
            .post(format!("{}/token", self.url))
            .basic_auth(client.0, Some(client.1))
            .form(&form)
            .send()
            .await
            .expect("the issuer answers")
            .json()
            .await
            .expect("JSON");
        answer["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("no token: {answer}"))
            .to_string()
    }
}

impl Drop for Issuer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
