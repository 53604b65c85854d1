//! Bodies and time: an answer is read as it streams, under a cap, and
//! refused at the first byte over it (a declared length over the cap is
//! refused before any byte is read); every purpose has its own limits.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;

use super::policy::Purpose;

/// What one fetch may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest body read.
    pub max_bytes: usize,
    /// The whole exchange, connecting included.
    pub timeout: Duration,
}

impl Purpose {
    /// The limits of a fetch for this purpose (a caller may tighten them:
    /// the prober's probe timeout is the topology's).
    pub fn limits(self) -> Limits {
        match self {
            // A health document, a card, a JWKS.
            Purpose::Member => Limits {
                max_bytes: 64 * 1024,
                timeout: Duration::from_secs(5),
            },
            // A discovery document, a JWKS.
            Purpose::Identity => Limits {
                max_bytes: 256 * 1024,
                timeout: Duration::from_secs(5),
            },
            // A would-be member's card and `/health`.
            Purpose::Onboarding => Limits {
                max_bytes: 64 * 1024,
                timeout: Duration::from_secs(5),
            },
            // A receiver's answer to a delivery (read only for its status).
            Purpose::Push => Limits {
                max_bytes: 64 * 1024,
                timeout: Duration::from_secs(10),
            },
        }
    }
}

/// Why a body was not read whole.
#[derive(Debug, thiserror::Error)]
pub enum BodyError<E: std::error::Error + 'static> {
    /// It is larger than the cap; reading stopped there.
    #[error("the answer is larger than {limit} bytes; the hub reads no more")]
    TooLarge { limit: usize },
    /// The transport failed while reading.
    #[error("{0}")]
    Transport(#[source] E),
}

/// Reads `body` up to `limit` bytes, stopping at the first byte over it.
pub async fn read_capped<B>(body: B, limit: usize) -> Result<Vec<u8>, BodyError<B::Error>>
where
    B: hyper::body::Body<Data = Bytes>,
    B::Error: std::error::Error + 'static,
{
    if body.size_hint().lower() > u64::try_from(limit).unwrap_or(u64::MAX) {
        return Err(BodyError::TooLarge { limit });
    }
    let mut body = std::pin::pin!(body);
    let mut buf = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(BodyError::Transport)?;
        if let Ok(data) = frame.into_data() {
            if buf.len() + data.len() > limit {
                return Err(BodyError::TooLarge { limit });
            }
            buf.extend_from_slice(&data);
        }
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::{Full, StreamBody};

    #[tokio::test]
    async fn a_body_is_read_to_its_cap_and_no_further() {
        let whole = read_capped(Full::new(Bytes::from_static(b"0123456789")), 10)
            .await
            .expect("at the cap");
        assert_eq!(whole, b"0123456789");
        let over = read_capped(Full::new(Bytes::from_static(b"0123456789")), 9).await;
        assert!(matches!(over, Err(BodyError::TooLarge { limit: 9 })));

        // An endless stream stops being read at the cap.
        let pulled = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = pulled.clone();
        let endless = futures::stream::repeat_with(move || {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok::<_, std::io::Error>(hyper::body::Frame::data(Bytes::from_static(&[0u8; 1024])))
        });
        let cut = read_capped(StreamBody::new(endless), 64 * 1024).await;
        assert!(matches!(cut, Err(BodyError::TooLarge { .. })));
        assert_eq!(
            pulled.load(std::sync::atomic::Ordering::SeqCst),
            65,
            "the 65th KiB is the first over"
        );
    }
}
