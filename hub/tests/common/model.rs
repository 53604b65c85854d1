//! The stand-in model server (`scripts/model-standin`) as a test fixture:
//! a real OpenAI-compatible HTTP process answering from a script, with a
//! request log, so the hub's model paths run for real and a test can see
//! every prompt the hub sent.

use serde_json::{json, Value as Json};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{plain_client, repo, reported_port};

/// A running stand-in; killed on drop.
pub struct Standin {
    pub port: u16,
    child: Child,
    http: reqwest::Client,
    /// Its script and its stdout.
    _dir: tempfile::TempDir,
}

impl Standin {
    /// Starts it with an empty script on port 0; its first line on stdout
    /// (`model-standin listening on http://…`) names the port it got.
    pub async fn start() -> Standin {
        let dir = tempfile::tempdir().expect("tempdir");
        let script = dir.path().join("script.json");
        std::fs::write(&script, "{\"rules\": []}").expect("write script");
        let out = dir.path().join("stdout");
        let child = Command::new(repo().join("scripts/model-standin"))
            .args(["--port", "0", "--script"])
            .arg(&script)
            .stdout(std::fs::File::create(&out).expect("stand-in stdout"))
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn scripts/model-standin");
        let mut s = Standin {
            port: 0,
            child,
            http: plain_client(),
            _dir: dir,
        };
        s.port = reported_port(&mut s.child, &out, "model-standin listening on ").await;
        let until = Instant::now() + Duration::from_secs(20);
        while s.http.get(s.url("/_log")).send().await.is_err() {
            assert!(Instant::now() < until, "the stand-in did not start");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        s
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// The tier's base URL.
    pub fn base_url(&self) -> String {
        self.url("/v1")
    }

    /// Replaces the script's rules and clears the log and counters.
    pub async fn script(&self, rules: Json) {
        let r = self
            .http
            .put(self.url("/_script"))
            .json(&json!({ "rules": rules }))
            .send()
            .await
            .expect("PUT /_script");
        assert!(
            r.status().is_success(),
            "{}",
            r.text().await.unwrap_or_default()
        );
        self.http
            .post(self.url("/_reset"))
            .send()
            .await
            .expect("reset");
    }

    /// Every request so far.
    pub async fn log(&self) -> Vec<Json> {
        self.http
            .get(self.url("/_log"))
            .send()
            .await
            .expect("GET /_log")
            .json()
            .await
            .expect("log is JSON")
    }

    /// The scripted rule that answered each request so far, in order.
    pub async fn rules(&self) -> Vec<Json> {
        self.log()
            .await
            .into_iter()
            .map(|e| e["rule"].clone())
            .collect()
    }
}

impl Drop for Standin {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
