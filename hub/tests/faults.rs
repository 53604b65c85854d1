//! Faults inflicted on real processes (DESIGN.md §1, reliability; §6,
//! replicas): a slow-loris client and a flood of connections from one
//! address are bounded (`hub::net::listen`) and everyone else's calls go on;
//! a peer killed under steady load costs only its own edge; a hub killed
//! under a load of writes — a replica behind nginx, or the one hub on its
//! SQLite file — loses nothing it acknowledged and runs nothing twice; nor
//! do replicas whose PostgreSQL restarts under that load.

mod common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::{PeerSpec, Stack};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// A TCP connection to `hub` from the loopback address `from` (127.0.0.x:
/// Linux routes all of 127/8 to the loopback interface).
/// One prepared request of the load: URL, headers, body.
type Request = (String, Vec<(String, String)>, serde_json::Value);

async fn connect_from(from: [u8; 4], hub: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("socket");
    socket
        .bind(SocketAddr::from((from, 0)))
        .expect("bind a loopback source address");
    socket.connect(hub).await.expect("connect to the hub")
}

/// Whether the hub has closed `stream` within `within` (reads to the end;
/// whatever the hub says before closing, a 408 say, is allowed).
async fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 1024];
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => continue,
        }
    }
}

fn hub_addr(stack: &Stack) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], stack.hub_port))
}

/// Everyone else's view of the hub: a logged-in topology read, timed.
async fn others_are_served(stack: &Stack, ui: &common::UiClient, what: &str) -> Duration {
    let started = Instant::now();
    let (status, body) = ui.get("/api/topology").await;
    assert_eq!(status, 200, "{what}: {body}");
    let a = stack
        .call("buyercorp", "vendorcorp", "orders.query")
        .body(serde_json::json!({"aggregate": {"op": "count"}}))
        .send()
        .await;
    assert!(a.result().is_object(), "{what}: the gateway answers too");
    started.elapsed()
}

#[tokio::test]
async fn a_slow_loris_client_is_cut_off_at_the_header_timeout_while_others_are_served() {
    let stack = Stack::start_with_env(
        vec![PeerSpec::stock("vendorcorp")],
        &[("WS_HEADER_TIMEOUT_SECS", "2")],
    )
    .await;
    let ui = stack.ui().await;
    let hub = hub_addr(&stack);
    // 30 connections that dribble a header one byte every 300 ms, and 10
    // that never send a byte.
    let mut dribblers = Vec::new();
    for _ in 0..30 {
        let mut s = connect_from([127, 0, 0, 3], hub).await;
        s.write_all(b"GET /api/topology HTTP/1.1\r\nHost: hub\r\nX-Slow: ")
            .await
            .expect("write");
        dribblers.push(s);
    }
    let mut silent = Vec::new();
    for _ in 0..10 {
        silent.push(connect_from([127, 0, 0, 3], hub).await);
    }
    let started = Instant::now();
    let dribbling = tokio::spawn(async move {
        let mut closed = vec![None; dribblers.len()];
        while closed.iter().any(Option::is_none) && started.elapsed() < Duration::from_secs(8) {
            for (i, s) in dribblers.iter_mut().enumerate() {
                if closed[i].is_none() && s.write_all(b"a").await.is_err() {
                    closed[i] = Some(started.elapsed());
                }
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        closed
    });
    // While they hold their connections, everyone else is served at once.
    for round in 0..3 {
        let took = others_are_served(&stack, &ui, "during the slow loris").await;
        assert!(took < Duration::from_secs(2), "round {round}: {took:?}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    for (i, s) in silent.iter_mut().enumerate() {
        assert!(
            closed_within(s, Duration::from_secs(6)).await,
            "silent connection {i} still open after {:?}",
            started.elapsed()
        );
    }
    let closed = dribbling.await.expect("the dribbler");
    for (i, at) in closed.iter().enumerate() {
        // A write fails once the hub has closed and the peer reset is seen.
        let at = at.unwrap_or_else(|| panic!("dribbler {i} was never cut off"));
        assert!(
            at >= Duration::from_secs(1),
            "dribbler {i} cut at {at:?}: too early"
        );
    }
    others_are_served(&stack, &ui, "after the slow loris").await;
}

#[tokio::test]
async fn a_flood_of_connections_from_one_address_does_not_lock_anyone_else_out() {
    let stack = Stack::start_with_env(
        vec![PeerSpec::stock("vendorcorp")],
        &[
            ("WS_MAX_CONNECTIONS_PER_ADDRESS", "40"),
            ("WS_HEADER_TIMEOUT_SECS", "30"),
        ],
    )
    .await;
    let ui = stack.ui().await;
    let hub = hub_addr(&stack);
    let mut flood = Vec::new();
    for _ in 0..200 {
        flood.push(connect_from([127, 0, 0, 2], hub).await);
    }
    // The hub keeps 40 of them and closes the rest at once.
    let mut closed = 0;
    for s in flood.iter_mut() {
        if closed_within(s, Duration::from_millis(300)).await {
            closed += 1;
        }
    }
    assert_eq!(closed, 160, "all but the per-address cap are closed");
    // Everyone else (here 127.0.0.1) is served while the 40 are held.
    let took = others_are_served(&stack, &ui, "during the flood").await;
    assert!(took < Duration::from_secs(2), "{took:?}");
    // A flooder's place comes back when one of its connections closes.
    flood.truncate(39);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut again = connect_from([127, 0, 0, 2], hub).await;
    again
        .write_all(b"GET /login HTTP/1.1\r\nHost: hub\r\nConnection: close\r\n\r\n")
        .await
        .expect("write");
    let mut answer = String::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), again.read_to_string(&mut answer)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:.80}");
    drop(flood);
}

/// One edge of the steady load: who calls whom for what, with which input.
struct Edge {
    name: &'static str,
    caller: &'static str,
    provider: &'static str,
    capability: &'static str,
    input: serde_json::Value,
}

/// What became of one call.
#[derive(Debug, Clone)]
struct Outcome {
    edge: usize,
    /// `connected`, a reason code, or `transport: …`.
    result: String,
    elapsed: Duration,
    /// Seconds since the load started.
    at: f64,
}

/// The hub's resident memory in KiB (`/proc/PID/status`).
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Steady load across three edges while VendorCorp (agent and data plane)
/// is SIGKILLed a quarter of the way in and restarted at half way.
/// `WS_FAULT_SECONDS` (default 12) and `WS_FAULT_RATE` (calls per second
/// over all edges, default 120) size it; `scripts/fault-load` runs it
/// longer and prints the same table.
#[tokio::test]
async fn steady_load_while_a_peer_is_killed_and_restarted() {
    let seconds = env_number("WS_FAULT_SECONDS", 12).max(8);
    let rate = env_number("WS_FAULT_RATE", 120).max(10);
    let mut stack = Stack::demo().await;
    let hub_pid = stack.hub_pid().expect("the hub runs");
    let deadline = Duration::from_millis(2_000); // topology default_deadline_ms
    let edges = [
        Edge {
            name: "buyercorp→vendorcorp orders.query (killed)",
            caller: "buyercorp",
            provider: "vendorcorp",
            capability: "orders.query",
            input: serde_json::json!({"aggregate": {"op": "count"}}),
        },
        Edge {
            name: "helpdesk→buyercorp budget.consult",
            caller: "helpdesk",
            provider: "buyercorp",
            capability: "budget.consult",
            input: serde_json::json!({"question": "How much of the marketing budget is left?"}),
        },
        Edge {
            name: "buyercorp→helpdesk ticket.classify",
            caller: "buyercorp",
            provider: "helpdesk",
            capability: "ticket.classify",
            input: serde_json::json!({"ticket_id": "T-1001"}),
        },
    ];
    let requests: Vec<Request> = edges
        .iter()
        .map(|e| {
            let call = stack
                .call(e.caller, e.provider, e.capability)
                .body(e.input.clone());
            (call.url, call.headers, call.body)
        })
        .collect();
    // Warm up, then take the memory baseline.
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .expect("client");
    for (url, headers, body) in &requests {
        for _ in 0..20 {
            let mut req = client.post(url).json(body);
            for (n, v) in headers {
                req = req.header(n.as_str(), v.as_str());
            }
            let _ = req.send().await;
        }
    }
    let rss_before = rss_kib(hub_pid);

    let total = seconds * rate;
    let started = Instant::now();
    let load = {
        let client = client.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate as f64));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
            let mut calls = Vec::with_capacity(total as usize);
            let mut peak_rss = 0;
            for n in 0..total {
                tick.tick().await;
                if n % rate == 0 {
                    peak_rss = peak_rss.max(rss_kib(hub_pid));
                }
                let edge = (n % requests.len() as u64) as usize;
                let (url, headers, body) = requests[edge].clone();
                let client = client.clone();
                calls.push(tokio::spawn(async move {
                    let at = started.elapsed().as_secs_f64();
                    let sent = Instant::now();
                    let mut req = client.post(&url).json(&body);
                    for (n, v) in &headers {
                        req = req.header(n.as_str(), v.as_str());
                    }
                    let result = match req.send().await {
                        Err(e) => format!("transport: {e}"),
                        Ok(resp) => match resp.json::<serde_json::Value>().await {
                            Err(e) => format!("transport: {e}"),
                            Ok(json) if json["status"] == "connected" => "connected".to_string(),
                            Ok(json) => json["reason"].as_str().unwrap_or("no reason").to_string(),
                        },
                    };
                    Outcome {
                        edge,
                        result,
                        elapsed: sent.elapsed(),
                        at,
                    }
                }));
            }
            let mut outcomes = Vec::with_capacity(calls.len());
            for c in calls {
                if let Ok(o) = c.await {
                    outcomes.push(o);
                }
            }
            (outcomes, peak_rss)
        })
    };
    let kill_at = seconds as f64 / 4.0;
    let restart_at = seconds as f64 / 2.0;
    tokio::time::sleep(Duration::from_secs_f64(kill_at)).await;
    stack.kill_plane("vendorcorp");
    stack.kill_peer("vendorcorp");
    tokio::time::sleep(Duration::from_secs_f64(restart_at - kill_at)).await;
    stack.start_peer("vendorcorp").await;
    let restarted = started.elapsed().as_secs_f64();
    let (outcomes, peak_rss) = load.await.expect("the load");
    let wall = started.elapsed();
    let rss_after = rss_kib(hub_pid);

    assert_eq!(outcomes.len() as u64, total, "every call ended");
    println!(
        "\nsteady load: {total} calls in {:.1} s ({rate}/s offered), VendorCorp killed at {kill_at:.1} s, \
         restarted at {restarted:.1} s; hub RSS {} → peak {} → {} KiB",
        wall.as_secs_f64(),
        rss_before,
        peak_rss,
        rss_after
    );
    println!(
        "{:<44} {:>6} {:>9} {:>8} {:>8} {:>8}  failures by reason",
        "edge", "calls", "success", "p50 ms", "p99 ms", "max ms"
    );
    for (i, edge) in edges.iter().enumerate() {
        let mine: Vec<&Outcome> = outcomes.iter().filter(|o| o.edge == i).collect();
        let ok = mine.iter().filter(|o| o.result == "connected").count();
        let mut times: Vec<Duration> = mine.iter().map(|o| o.elapsed).collect();
        times.sort();
        let mut reasons = std::collections::BTreeMap::new();
        for o in mine.iter().filter(|o| o.result != "connected") {
            *reasons.entry(o.result.clone()).or_insert(0) += 1;
        }
        let rate_ok = ok as f64 / mine.len().max(1) as f64;
        println!(
            "{:<44} {:>6} {:>8.2}% {:>8.1} {:>8.1} {:>8.1}  {reasons:?}",
            edge.name,
            mine.len(),
            rate_ok * 100.0,
            percentile(&times, 0.5).as_secs_f64() * 1e3,
            percentile(&times, 0.99).as_secs_f64() * 1e3,
            times.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
        );
        // Every call ends by its deadline (plus what the hub needs to say so).
        let slowest = times.last().copied().unwrap_or_default();
        assert!(
            slowest <= deadline + Duration::from_millis(1_500),
            "{}: a call took {slowest:?}",
            edge.name
        );
        if i == 0 {
            // The killed peer's calls fail only with the two reasons that
            // say so, and it is back once restarted.
            for reason in reasons.keys() {
                assert!(
                    reason == "PEER_UNREACHABLE" || reason == "TIMEOUT",
                    "{}: {reason}",
                    edge.name
                );
            }
            let tail_ok = mine
                .iter()
                .filter(|o| o.at > restarted + 3.0 && o.result == "connected")
                .count();
            assert!(tail_ok > 0, "{}: no success after the restart", edge.name);
            let early_ok = mine
                .iter()
                .filter(|o| o.at < kill_at && o.result == "connected")
                .count();
            assert!(early_ok > 0, "{}: no success before the kill", edge.name);
        } else {
            assert!(
                rate_ok >= 0.999,
                "{}: {:.3}% succeeded while another peer died: {reasons:?}",
                edge.name,
                rate_ok * 100.0
            );
        }
    }
    // The hub's memory stays flat: no more than 64 MiB above the warm
    // baseline at any point.
    assert!(
        peak_rss.max(rss_after) <= rss_before + 64 * 1024,
        "hub RSS grew from {rss_before} to {} KiB",
        peak_rss.max(rss_after)
    );
}

#[tokio::test]
async fn a_peer_that_streams_an_endless_answer_is_cut_off_and_others_go_on() {
    let endless = common::Faults {
        endless_answer: true,
        ..Default::default()
    };
    let stack = Stack::start(vec![
        PeerSpec::clone_of("endless", "helpdesk", endless),
        PeerSpec::stock("helpdesk"),
        PeerSpec::stock("vendorcorp"),
    ])
    .await;
    let hub_pid = stack.hub_pid().expect("the hub runs");
    let rss_before = rss_kib(hub_pid);
    let call = |provider: &str| {
        stack
            .call("buyercorp", provider, "ticket.classify")
            .body(serde_json::json!({"ticket_id": "T-1001"}))
            .send()
    };
    // Eight endless answers at once, and the healthy peer beside them;
    // ten rounds, so a cost that grows with the number of endless answers
    // (rather than with how many are open at once) shows.
    let mut rss_after_round = Vec::new();
    let mut endless_answers = Vec::new();
    for _round in 0..env_number("WS_ENDLESS_ROUNDS", 10).max(6) {
        let endless_calls = futures::future::join_all((0..8).map(|_| call("endless")));
        let healthy_calls = futures::future::join_all((0..8).map(|_| call("helpdesk")));
        let (endless_round, healthy_answers) = tokio::join!(endless_calls, healthy_calls);
        for a in &endless_round {
            assert_ne!(a.json["status"], "connected", "{}", a.json);
            let reason = a.reason();
            assert!(
                reason == "PEER_ERROR" || reason == "TIMEOUT",
                "an endless answer is the peer's fault or a timeout: {reason}"
            );
            assert!(
                a.elapsed < Duration::from_millis(3_500),
                "ended by the deadline: {:?}",
                a.elapsed
            );
        }
        for a in &healthy_answers {
            assert_eq!(a.result()["ticket_id"], "T-1001");
            assert!(a.elapsed < Duration::from_secs(2), "{:?}", a.elapsed);
        }
        rss_after_round.push(rss_kib(hub_pid));
        endless_answers = endless_round;
    }
    // Each answer is read up to the hub's cap (4 MiB) and no further: the
    // first round costs what eight capped reads cost (with the allocator's
    // slack), and later rounds cost nothing more. The allocator keeps and
    // returns pages as it likes: over 20 rounds alone the RSS wandered
    // between 175 and 232 MiB with no trend, and a single round can sit
    // 40 MiB above its neighbours. So the test compares the lowest of the
    // last three rounds with the highest of the first three, with 48 MiB
    // of room: a leak of the capped reads (32 MiB a round) puts every late
    // round about 200 MiB above every early one, while the allocator's
    // wandering (seen: up to 16 MiB of drift over ten rounds) does not.
    let first = rss_after_round[0];
    let early = rss_after_round[..3].iter().copied().max().unwrap_or(first);
    let late = rss_after_round[rss_after_round.len() - 3..]
        .iter()
        .copied()
        .min()
        .unwrap_or(first);
    let last = rss_after_round[rss_after_round.len() - 1];
    // The first round: eight capped reads (32 MiB) and the allocator's
    // slack, seen up to 67 MiB on top (a round can sit 40 MiB above its
    // neighbours); an uncapped read streams at loopback speed until the
    // deadline, gigabytes, far past this.
    assert!(
        first <= rss_before + 8 * 4 * 4 * 1024,
        "hub RSS {rss_before} → {first} KiB after eight endless answers"
    );
    assert!(
        late <= early + 48 * 1024,
        "hub RSS grew round after round: {rss_before} → {rss_after_round:?} KiB"
    );
    let rss_after = last;
    println!(
        "endless answers: {:?}; hub RSS {rss_before} → {rss_after} KiB (rounds: {rss_after_round:?})",
        endless_answers
            .iter()
            .map(|a| (a.reason().to_string(), a.elapsed.as_millis()))
            .collect::<Vec<_>>()
    );
}

/// The mixed write load (`common::load`) while replica 0 of two is
/// SIGKILLed a third of the way in and restarted at two thirds: callers
/// retry by their keys through nginx; afterwards every acknowledged
/// consult, task, position and decision is in the shared store, every
/// task ran once and every decision was recorded once.
/// `WS_FAULT_SECONDS` (default 12) and `WS_FAULT_WRITE_RATE` (operations a
/// second, default 40) size it.
#[tokio::test]
async fn a_replica_killed_mid_load_loses_nothing_acknowledged_and_runs_nothing_twice() {
    let seconds = env_number("WS_FAULT_SECONDS", 12).max(6);
    let rate = env_number("WS_FAULT_WRITE_RATE", 40).max(8);
    let mut stack = Stack::start_replicas_with(2, vec![slow_budgets()], &[]).await;
    let load = common::load::start(&stack, rate, seconds, "slowbudgets").await;
    tokio::time::sleep(Duration::from_secs_f64(seconds as f64 / 3.0)).await;
    stack.kill_replica(0);
    let killed = Instant::now();
    tokio::time::sleep(Duration::from_secs_f64(seconds as f64 / 3.0)).await;
    stack.start_replica(0).await;
    let down = killed.elapsed();
    let run = load.await.expect("the load");
    let verified = run.verify(&stack, "slowbudgets").await;
    run.print(
        &format!(
            "2 replicas behind nginx, replica 0 SIGKILLed at {:.1} s for {:.1} s",
            seconds as f64 / 3.0,
            down.as_secs_f64()
        ),
        &verified,
    );
    assert_durable(&run, &verified);
}

/// The same load against a hub alone on its store — its SQLite file, or
/// (`WS_TEST_STORE=postgres`) its PostgreSQL database — SIGKILLed a third
/// of the way in and restarted at once on the same store: every write it
/// acknowledged before the kill (and after) is there afterwards.
#[tokio::test]
async fn a_lone_hub_killed_under_load_keeps_every_acknowledged_record() {
    let seconds = env_number("WS_FAULT_SECONDS", 12).max(6);
    let rate = env_number("WS_FAULT_WRITE_RATE", 40).max(8);
    let mut stack = Stack::start(vec![
        PeerSpec::stock("vendorcorp"),
        PeerSpec::stock("buyercorp"),
        PeerSpec::stock("helpdesk"),
        slow_budgets(),
    ])
    .await;
    let engine = stack.hub_store.engine().as_str();
    let load = common::load::start(&stack, rate, seconds, "slowbudgets").await;
    tokio::time::sleep(Duration::from_secs_f64(seconds as f64 / 3.0)).await;
    stack.kill_hub();
    let killed = Instant::now();
    stack.start_hub().await;
    let down = killed.elapsed();
    let run = load.await.expect("the load");
    let verified = run.verify(&stack, "slowbudgets").await;
    let before_kill = run
        .done
        .iter()
        .filter(|d| d.acknowledged && d.at + d.elapsed.as_secs_f64() < seconds as f64 / 3.0)
        .count();
    run.print(
        &format!(
            "the hub alone on {engine}, SIGKILLed at {:.1} s, back after {:.1} s \
             ({before_kill} operations acknowledged before the kill)",
            seconds as f64 / 3.0,
            down.as_secs_f64()
        ),
        &verified,
    );
    assert!(
        before_kill > 0,
        "the kill came after some acknowledged writes"
    );
    assert_durable(&run, &verified);
}

/// The same load against two replicas whose PostgreSQL is stopped a third
/// of the way in (a fast shutdown: every connection of every replica cut)
/// and started again two seconds later, on a cluster the test owns: the
/// replicas' pools, listeners and locks reconnect on their own, and every
/// operation — retried by its key while the database was away — ends
/// acknowledged, once, with nothing acknowledged lost.
#[tokio::test]
async fn the_replicas_database_restarted_under_load_loses_nothing_acknowledged() {
    let seconds = env_number("WS_FAULT_SECONDS", 12).max(6);
    let rate = env_number("WS_FAULT_WRITE_RATE", 40).max(8);
    // Declared first, dropped last: the replicas stop before their server.
    let cluster = exchange::testing::Cluster::own();
    let database = cluster.fresh_database().await;
    let stack = Stack::start_replicas_on(2, vec![slow_budgets()], &[], Some(database)).await;
    let load = common::load::start(&stack, rate, seconds, "slowbudgets").await;
    tokio::time::sleep(Duration::from_secs_f64(seconds as f64 / 3.0)).await;
    let stopped = Instant::now();
    // Stopping and starting wait on the server: off the runtime's thread,
    // so the load goes on meanwhile.
    let mut cluster = tokio::task::spawn_blocking(move || {
        let mut cluster = cluster;
        cluster.stop();
        cluster
    })
    .await
    .expect("stopping the cluster");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let cluster = tokio::task::spawn_blocking(move || {
        cluster.start_again();
        cluster
    })
    .await
    .expect("starting the cluster again");
    let down = stopped.elapsed();
    let run = load.await.expect("the load");
    let verified = run.verify(&stack, "slowbudgets").await;
    run.print(
        &format!(
            "2 replicas behind nginx, their PostgreSQL stopped at {:.1} s, back after {:.1} s",
            seconds as f64 / 3.0,
            down.as_secs_f64()
        ),
        &verified,
    );
    assert_durable(&run, &verified);
    drop(stack);
    drop(cluster);
}

/// What both kills must leave: nothing acknowledged lost, nothing run
/// twice, every operation ended (acknowledged, or given up only by a
/// caller whose budget ran out while no hub answered).
fn assert_durable(run: &common::load::Run, v: &common::load::Verified) {
    assert!(
        v.lost.is_empty(),
        "acknowledged but not stored: {:?}",
        v.lost
    );
    assert!(v.tasks_not_once.is_empty(), "{:?}", v.tasks_not_once);
    assert!(
        v.decisions_not_once.is_empty(),
        "{:?}",
        v.decisions_not_once
    );
    let acked = run.done.iter().filter(|d| d.acknowledged).count();
    assert_eq!(
        acked,
        run.done.len(),
        "every operation was acknowledged within its retry budget: {:?}",
        run.done
            .iter()
            .filter(|d| !d.acknowledged)
            .map(|d| (d.kind, d.last_failure.as_str()))
            .collect::<Vec<_>>()
    );
    assert!(
        run.done.iter().any(|d| d.retries > 0),
        "the kill interrupted nothing: no operation needed a retry"
    );
}

/// A budget owner that answers a consult after 250 ms: calls are in
/// flight when a hub dies.
fn slow_budgets() -> PeerSpec {
    PeerSpec::clone_of(
        "slowbudgets",
        "buyercorp",
        common::Faults {
            stall_ms: 250,
            ..Default::default()
        },
    )
}
