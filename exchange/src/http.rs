//! Outbound HTTP between systems (DESIGN.md §1 rule 1: a peer can be down,
//! slow or lying).
//!
//! Whoever calls another system over HTTP — the hub's gateway and prober,
//! a peer calling through the hub — reads the answer with [`read_limited`]
//! (a peer cannot make it buffer without bound) and turns a transport error
//! into one reason code with [`transport_failure`] (a detail that names the
//! system, never its URL).

use crate::reason::{NotConnected, ReasonCode};
use crate::text::clip;

/// Reads a body up to `limit` bytes; `None` if it is larger.
pub async fn read_limited(
    mut resp: reqwest::Response,
    limit: usize,
) -> Result<Option<Vec<u8>>, reqwest::Error> {
    let mut buf = Vec::new();
    while let Some(chunk) = resp.chunk().await? {
        if buf.len() + chunk.len() > limit {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(Some(buf))
}

/// Maps a transport error (nothing usable came back) to a reason code and
/// a detail that names the system `id`, never its URL.
pub fn transport_failure(id: &str, e: &reqwest::Error) -> NotConnected {
    if e.is_timeout() {
        return NotConnected::new(ReasonCode::Timeout, format!("{id} timed out"));
    }
    transport_failure_of(id, e, e.is_connect())
}

/// [`transport_failure`] for any client's error (`connecting`: it failed
/// before a connection was made): the I/O error underneath names what
/// happened.
pub fn transport_failure_of(
    id: &str,
    e: &(dyn std::error::Error + 'static),
    connecting: bool,
) -> NotConnected {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind as K;
            let what = match io.kind() {
                K::ConnectionRefused => "connection refused",
                K::ConnectionReset | K::ConnectionAborted => "connection reset",
                K::BrokenPipe | K::UnexpectedEof => "connection closed",
                K::TimedOut => {
                    return NotConnected::new(ReasonCode::Timeout, format!("{id} timed out"))
                }
                _ => "connection failed",
            };
            return NotConnected::new(ReasonCode::PeerUnreachable, format!("{what} by {id}"));
        }
        source = err.source();
    }
    let what = if connecting {
        "cannot connect to"
    } else {
        "connection lost with"
    };
    NotConnected::new(ReasonCode::PeerUnreachable, format!("{what} {id}"))
}

/// What went wrong underneath an error, in words an operator reads
/// ("connection refused"), not a transport's type names: the I/O error
/// at the bottom of the chain when there is one, else the innermost cause.
pub fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    let mut last = e.to_string();
    while let Some(err) = source {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            return match io.kind() {
                std::io::ErrorKind::ConnectionRefused => "connection refused".into(),
                std::io::ErrorKind::ConnectionReset => "connection reset".into(),
                kind => format!("{kind}"),
            };
        }
        last = err.to_string();
        source = err.source();
    }
    clip(&last, 200)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error that wraps another, as transports do.
    #[derive(Debug)]
    struct Wrapped(std::io::Error);

    impl std::fmt::Display for Wrapped {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("Transport<Worker<Client>> error: client error")
        }
    }

    impl std::error::Error for Wrapped {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn the_root_cause_is_the_io_error_underneath_in_plain_words() {
        let refused = Wrapped(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
        assert_eq!(root_cause(&refused), "connection refused");
        let plain = std::fmt::Error;
        assert_eq!(
            root_cause(&plain),
            "an error occurred when formatting an argument"
        );
    }
}
