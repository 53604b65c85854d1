//! A small DNS server for the egress tests (UDP, one name): it answers
//! `A` queries for its name with the address it holds now — which the
//! test changes, as a rebinding attacker's server would — with TTL 0;
//! `AAAA` with no record; any other name with NXDOMAIN. Every query is
//! counted. The hub is pointed at it with `WS_EGRESS_DNS`.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::net::UdpSocket;

/// The server; stops when dropped.
pub struct Dns {
    pub addr: SocketAddr,
    answer: Arc<Mutex<Ipv4Addr>>,
    queries: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Dns {
    fn drop(&mut self) {
        self.task.abort();
    }
}

const TYPE_A: u16 = 1;
const NOERROR: u8 = 0;
const NXDOMAIN: u8 = 3;

impl Dns {
    /// Answers `name`'s `A` queries with `first` until told otherwise.
    pub async fn start(name: &str, first: Ipv4Addr) -> Dns {
        let socket = UdpSocket::bind("127.0.0.1:0").await.expect("bind dns");
        let addr = socket.local_addr().expect("dns address");
        let answer = Arc::new(Mutex::new(first));
        let queries = Arc::new(AtomicUsize::new(0));
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        let task = {
            let (answer, queries) = (answer.clone(), queries.clone());
            tokio::spawn(async move {
                let mut buf = [0u8; 1500];
                while let Ok((n, from)) = socket.recv_from(&mut buf).await {
                    queries.fetch_add(1, Ordering::SeqCst);
                    let now = *answer.lock().expect("answer");
                    if let Some(reply) = respond(&buf[..n], &name, now) {
                        let _ = socket.send_to(&reply, from).await;
                    }
                }
            })
        };
        Dns {
            addr,
            answer,
            queries,
            task,
        }
    }

    /// From now on, `name` is `ip`.
    pub fn answer(&self, ip: Ipv4Addr) {
        *self.answer.lock().expect("answer") = ip;
    }

    /// Queries received so far.
    pub fn queries(&self) -> usize {
        self.queries.load(Ordering::SeqCst)
    }
}

/// The reply to `query`, or `None` for what is not a query.
fn respond(query: &[u8], name: &str, ip: Ipv4Addr) -> Option<Vec<u8>> {
    if query.len() < 12 || query[2] & 0x80 != 0 {
        return None;
    }
    // The question: labels, then type and class.
    let mut at = 12;
    let mut labels = Vec::new();
    loop {
        let len = usize::from(*query.get(at)?);
        at += 1;
        if len == 0 {
            break;
        }
        labels.push(String::from_utf8_lossy(query.get(at..at + len)?).to_ascii_lowercase());
        at += len;
    }
    let qtype = u16::from_be_bytes([*query.get(at)?, *query.get(at + 1)?]);
    let question_end = at + 4;
    let question = query.get(12..question_end)?;
    let ours = labels.join(".") == name;
    let (rcode, answers) = match (ours, qtype) {
        (false, _) => (NXDOMAIN, 0u16),
        (true, TYPE_A) => (NOERROR, 1),
        (true, _) => (NOERROR, 0),
    };
    let mut reply = Vec::with_capacity(question_end + 16);
    reply.extend_from_slice(&query[0..2]);
    // QR, the query's opcode and RD, RA; the code.
    reply.push(0x80 | (query[2] & 0x79));
    reply.push(0x80 | rcode);
    reply.extend_from_slice(&1u16.to_be_bytes());
    reply.extend_from_slice(&answers.to_be_bytes());
    reply.extend_from_slice(&[0, 0, 0, 0]);
    reply.extend_from_slice(question);
    if answers == 1 {
        // The name by pointer to the question, A, IN, TTL 0, 4 bytes.
        reply.extend_from_slice(&[0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4]);
        reply.extend_from_slice(&ip.octets());
    }
    Some(reply)
}
