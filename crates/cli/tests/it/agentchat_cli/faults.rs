//! The faults of `revcal agentchat`, each against the real server: a server killed and
//! restarted mid-stream, a duplicate posting, a message posted by another agent than its
//! signer, a message the server masked, malformed JSON, 2 MiB messages, 200 messages at once
//! from ten agents, two ledger agents on one ledger, and two servers sharing one PostgreSQL
//! ledger.

use super::{Scene, genesis, posted, request_with_diff, stderr, wait_for_event, wait_for_messages};
use crate::agentchat_server::AgentChatServer;
use revcal_agentchat::{Answer, ChatIdentity, Session, SessionConfig, SessionEvent};
use revcal_elo::{Keypair, Ledger, verify_receipt};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// `n` requests as JSON lines, titled `PREFIX n`.
fn requests(prefix: &str, n: usize) -> String {
    (0..n)
        .map(|i| {
            json!({"type": "REVIEW_REQUEST", "to": "#review", "content": {"title": format!("{prefix} {i}")}})
                .to_string()
                + "\n"
        })
        .collect()
}

/// A raw chat client (no revcal command): what another program could post.
fn raw_client(server: &AgentChatServer, key: &Keypair) -> Session {
    let mut config = SessionConfig::new(&server.url(), "raw", "#review");
    config.wait_for_channel = true;
    let mut session = Session::new(ChatIdentity::new(key.clone()), config).unwrap();
    let started = Instant::now();
    loop {
        if let Some(SessionEvent::Joined { .. }) = session.poll(Duration::from_millis(200)).unwrap() {
            return session;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "the raw client never joined");
    }
}

/// Posts `content` raw and returns the ledger's status answer to it.
fn raw_answer(session: &mut Session, content: &str) -> Value {
    let token = session.send(content, None).unwrap();
    let mut msg_id = None;
    let started = Instant::now();
    loop {
        assert!(started.elapsed() < Duration::from_secs(120), "no answer to a raw post");
        match session.poll(Duration::from_millis(200)).unwrap() {
            Some(SessionEvent::Sent { token: sent, msg_id: id, .. }) if sent == token => msg_id = id,
            Some(SessionEvent::Message(message)) => {
                let Some(Answer::Statuses { ledger: Some(_), answers, .. }) = Answer::parse(&message.content)
                else {
                    continue;
                };
                if let Some(answer) = answers
                    .into_iter()
                    .find(|answer| msg_id.is_some() && answer["in_reply_to"].as_str() == msg_id.as_deref())
                {
                    return answer;
                }
            }
            _ => {}
        }
    }
}

fn started(test: &str, scene: &Scene) -> Option<(AgentChatServer, Keypair)> {
    let ledger_key = scene.key("ledger", 30);
    let server = AgentChatServer::start(test, Some(&genesis(&ledger_key)))?;
    Some((server, ledger_key))
}

#[test]
fn the_server_killed_and_restarted_mid_stream_loses_nothing_acknowledged_and_stores_nothing_twice() {
    let scene = Scene::new();
    let Some((mut server, _)) = started("the_server_killed_and_restarted", &scene) else { return };
    scene.key("alice", 31);
    let ledger = scene.path("ledger.sqlite");
    let agent = scene.serve("ledger", &server, &ledger.display().to_string());
    let file = scene.write("many.jsonl", &requests("restart", 12));
    let poster = {
        let url = server.url();
        let file = file.display().to_string();
        scene.spawn(
            "poster",
            &[
                "agentchat",
                "post",
                "--server",
                &url,
                "--key",
                "alice.key",
                &file,
                "--json",
                "--wait",
                "240",
                "-v",
            ],
            &[],
        )
    };
    // Mid-stream: some stored, not all.
    wait_for_messages(&ledger, 3, &agent);
    server.kill();
    server.restart();
    // The poster ends by itself: every message answered.
    let started = Instant::now();
    let mut poster = poster;
    let code = loop {
        if let Some(status) = poster.child.as_mut().unwrap().try_wait().unwrap() {
            poster.child = None;
            break status.code();
        }
        assert!(started.elapsed() < Duration::from_secs(300), "post never finished:\n{}", poster.stderr());
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(code, Some(0), "{}\n{}", poster.stdout(), poster.stderr());
    // The poster lost its connection and posted again after reconnecting.
    assert!(poster.stderr().contains("disconnected; posting again"), "{}", poster.stderr());
    let answers: Vec<Value> =
        poster.stdout().lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(answers.len(), 12);
    let stored = Ledger::open(&ledger).unwrap();
    assert_eq!(stored.message_count().unwrap(), 12, "each message stored once");
    for answer in &answers {
        assert!(["stored", "already_stored"].contains(&answer["outcome"].as_str().unwrap()), "{answer}");
    }
    let ids: HashSet<&str> = answers.iter().map(|answer| answer["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 12);
    // The ledger agent reconnected (and created #review again on the new server).
    let joins = agent.events().iter().filter(|event| event["event"] == "joined").count();
    assert!(joins >= 2, "{}", agent.stderr());
    assert!(agent.events().iter().any(|event| event["event"] == "disconnected"));
    let check = scene.revcal(&["elo", "check", "--ledger", &ledger.display().to_string()]).output().unwrap();
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
}

#[test]
fn a_duplicate_posting_is_stored_once_and_answered_as_already_stored() {
    let scene = Scene::new();
    let Some((server, _)) = started("a_duplicate_posting", &scene) else { return };
    scene.key("alice", 31);
    scene.key("bob", 32);
    let ledger = scene.path("ledger.sqlite");
    let _agent = scene.serve("ledger", &server, &ledger.display().to_string());
    // Signed once, posted twice as it is.
    let request = json!({"type": "REVIEW_REQUEST", "to": "#review", "ts": 1_700_000_000_000u64, "content": {"title": "dup"}});
    let unsigned = scene.write("request.json", &request.to_string());
    let signed = scene
        .revcal(&["elo", "sign", &unsigned.display().to_string(), "--key", "alice.key"])
        .output()
        .unwrap();
    assert!(signed.status.success());
    let file = scene.write("signed.jsonl", &String::from_utf8_lossy(&signed.stdout));
    let first = scene.post(&server, "alice", &file, &["--signed"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert_eq!(posted(&first)[0]["outcome"], "stored");
    let second = scene.post(&server, "alice", &file, &["--signed"]);
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    let answer = &posted(&second)[0];
    assert_eq!(answer["outcome"], "already_stored", "{answer}");
    assert_eq!(answer["answer"]["code"], "replayed");
    assert!(
        String::from_utf8_lossy(&scene.post(&server, "alice", &file, &["--signed"]).stdout)
            .contains("already_stored")
    );
    assert_eq!(Ledger::open(&ledger).unwrap().message_count().unwrap(), 1);
}

#[test]
fn a_message_signed_by_one_key_and_posted_by_another_agent_is_refused() {
    let scene = Scene::new();
    let Some((server, _)) = started("a_message_signed_by_one_key", &scene) else { return };
    let alice = scene.key("alice", 31);
    let mallory = scene.key("mallory", 33);
    let ledger = scene.path("ledger.sqlite");
    let _agent = scene.serve("ledger", &server, &ledger.display().to_string());
    let unsigned = scene.write("request.json", &request_with_diff("in alice's name", "x"));
    let signed = scene
        .revcal(&["elo", "sign", &unsigned.display().to_string(), "--key", "alice.key"])
        .output()
        .unwrap();
    let file = scene.write("signed.jsonl", &String::from_utf8_lossy(&signed.stdout));
    let output = scene.post(&server, "mallory", &file, &["--signed"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let answer = &posted(&output)[0];
    assert_eq!(answer["outcome"], "refused", "{answer}");
    assert_eq!(answer["answer"]["code"], "sender_mismatch");
    let reason = answer["answer"]["reason"].as_str().unwrap();
    let alice_chat = ChatIdentity::new(alice).chat_id().to_string();
    let mallory_chat = ChatIdentity::new(mallory).chat_id().to_string();
    assert!(reason.contains(&alice_chat) && reason.contains(&mallory_chat), "{reason}");
    assert_eq!(Ledger::open(&ledger).unwrap().message_count().unwrap(), 0);
    // Posted by its signer, the same message is stored.
    let output = scene.post(&server, "alice", &file, &["--signed"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(Ledger::open(&ledger).unwrap().message_count().unwrap(), 1);
}

#[test]
fn a_message_the_server_masked_is_refused_as_altered() {
    let scene = Scene::new();
    let Some((server, _)) = started("a_message_the_server_masked", &scene) else { return };
    scene.key("alice", 31);
    let ledger = scene.path("ledger.sqlite");
    let agent = scene.serve("ledger", &server, &ledger.display().to_string());
    let request = json!({"type": "REVIEW_REQUEST", "to": "#review",
        "content": {"title": "rotate credentials", "token": "abcdefghijklmnop0123456789"}});
    let file = scene.write("request.json", &request.to_string());
    let output = scene.post(&server, "alice", &file, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let answer = &posted(&output)[0];
    assert_eq!(answer["answer"]["code"], "altered", "{answer}");
    assert!(answer["answer"]["reason"].as_str().unwrap().contains("masked"), "{answer}");
    assert_eq!(Ledger::open(&ledger).unwrap().message_count().unwrap(), 0);
    // The server masked the value before the ledger agent saw it, and nothing quotes it.
    for text in [agent.stdout(), agent.stderr(), String::from_utf8_lossy(&output.stdout).into_owned()] {
        assert!(!text.contains("abcdefghijklmnop0123456789"), "{text}");
    }
}

#[test]
fn malformed_json_is_refused_with_its_position_and_the_agent_goes_on() {
    let scene = Scene::new();
    let Some((server, _)) = started("malformed_json", &scene) else { return };
    let raw = scene.key("raw", 34);
    scene.key("alice", 31);
    let ledger = scene.path("ledger.sqlite");
    let _agent = scene.serve("ledger", &server, &ledger.display().to_string());
    let mut session = raw_client(&server, &raw);
    let answer = raw_answer(&mut session, r#"{"type": "REVIEW", "content": {"verdict": "APPROVE""#);
    assert_eq!(answer["status"], "rejected", "{answer}");
    assert_eq!(answer["code"], "invalid");
    assert!(answer["reason"].as_str().unwrap().contains("column"), "{answer}");
    // Chat that is not a protocol message is no business of the ledger: no answer. The next
    // protocol message is answered.
    session.send("hello, reviewers", None).unwrap();
    let answer = raw_answer(&mut session, r#"{"type": "REVIEW_LEADERBOARD", "content": {"limit": 0}}"#);
    assert_eq!(
        (answer["code"].as_str(), answer["field"].as_str()),
        (Some("invalid"), Some("content.limit")),
        "{answer}"
    );
    let output = scene.post(&server, "alice", &scene.write("r.json", &requests("after", 1)), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[test]
fn two_mib_messages_are_refused_before_posting_or_by_the_ledger_and_the_agent_goes_on() {
    let scene = Scene::new();
    let Some((server, _)) = started("two_mib_messages", &scene) else { return };
    let raw = scene.key("raw", 34);
    scene.key("alice", 31);
    let ledger = scene.path("ledger.sqlite");
    let agent = scene.serve("ledger", &server, &ledger.display().to_string());
    // `post` refuses a 2 MiB message before connecting.
    let big = json!({"type": "REVIEW_REQUEST", "to": "#review", "content": {"title": "big", "diff": "x".repeat(2 << 20)}});
    let output = scene.post(&server, "alice", &scene.write("big.json", &big.to_string()), &[]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("more than the protocol's limit of 1 MiB"), "{}", stderr(&output));
    assert!(stderr(&output).contains("nothing posted"));
    // Posted raw, 1.5 MiB passes the server and is refused by the ledger agent.
    let mut session = raw_client(&server, &raw);
    let text = json!({"type": "REVIEW_REQUEST", "to": "#review", "content": {"title": "big", "diff": "y".repeat(3 << 19)}}).to_string();
    let answer = raw_answer(&mut session, &text);
    assert_eq!(answer["code"], "invalid", "{answer}");
    assert!(answer["reason"].as_str().unwrap().contains("more than the limit of 1 MiB"), "{answer}");
    // A frame over 2 MiB is not sent at all by the client library.
    assert!(session.send(&"z".repeat(2 << 20), None).is_err());
    // The agent is still there.
    let output = scene.post(&server, "alice", &scene.write("r.json", &requests("after", 1)), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(Ledger::open(&ledger).unwrap().message_count().unwrap(), 1);
    assert!(!agent.events().iter().any(|event| event["event"] == "disconnected"), "{}", agent.stderr());
}

#[test]
fn two_hundred_messages_at_once_from_ten_agents_are_all_stored() {
    let scene = Scene::new();
    let Some((server, _)) = started("two_hundred_messages", &scene) else { return };
    let ledger = scene.path("ledger.sqlite");
    let agent = scene.serve("ledger", &server, &ledger.display().to_string());
    let mut posters = Vec::new();
    for n in 0..10u8 {
        let name = format!("agent{n}");
        scene.key(&name, 40 + n);
        let file = scene.write(&format!("{name}.jsonl"), &requests(&name, 20));
        let key = format!("{name}.key");
        let url = server.url();
        let file = file.display().to_string();
        posters.push(scene.spawn(
            &name,
            &["agentchat", "post", "--server", &url, "--key", &key, &file, "--json", "--wait", "300"],
            &[],
        ));
    }
    for poster in &mut posters {
        let started = Instant::now();
        let code = loop {
            if let Some(status) = poster.child.as_mut().unwrap().try_wait().unwrap() {
                poster.child = None;
                break status.code();
            }
            assert!(
                started.elapsed() < Duration::from_secs(400),
                "a poster never finished:\n{}",
                poster.stderr()
            );
            std::thread::sleep(Duration::from_millis(100));
        };
        assert_eq!(code, Some(0), "{}", poster.stderr());
        let answers: Vec<Value> =
            poster.stdout().lines().map(|line| serde_json::from_str(line).unwrap()).collect();
        assert_eq!(answers.len(), 20);
        assert!(answers.iter().all(|answer| answer["outcome"] == "stored"), "{}", poster.stdout());
    }
    assert_eq!(Ledger::open(&ledger).unwrap().message_count().unwrap(), 200, "{}", agent.stderr());
}

#[test]
fn two_ledger_agents_on_one_ledger_store_each_message_once() {
    let scene = Scene::new();
    let Some((server, _)) = started("two_ledger_agents", &scene) else { return };
    scene.key("second", 35);
    scene.key("alice", 31);
    let ledger = scene.path("ledger.sqlite");
    let ledger_text = ledger.display().to_string();
    let first = scene.serve("ledger", &server, &ledger_text);
    wait_for_event(&first, "the first agent in the channel", |event| event["event"] == "joined");
    let second = scene.serve("second", &server, &ledger_text);
    wait_for_event(&second, "the second agent in the channel", |event| event["event"] == "joined");
    let output = scene.post(&server, "alice", &scene.write("r.jsonl", &requests("both", 8)), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let answers = posted(&output);
    assert!(answers.iter().all(|answer| answer["outcome"] == "stored"), "{answers:?}");
    assert_eq!(Ledger::open(&ledger).unwrap().message_count().unwrap(), 8);
    // Each message stored by exactly one of the two.
    let stored: usize = [&first, &second]
        .iter()
        .map(|agent| agent.events().iter().filter(|event| event["event"] == "stored").count())
        .sum();
    assert_eq!(stored, 8);
    let check = scene.revcal(&["elo", "check", "--ledger", &ledger_text]).output().unwrap();
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
}

#[test]
fn two_servers_sharing_one_postgresql_ledger_rate_a_reviewer_as_one() {
    let Some(database) = revcal_testpg::TestDatabase::create("two_servers_sharing_one_postgresql_ledger")
    else {
        return;
    };
    let scene = Scene::new();
    let (key_a, key_b) = (scene.key("ledger", 30), scene.key("second", 35));
    let Some(server_a) = AgentChatServer::start("two_servers_a", Some(&genesis(&key_a))) else { return };
    let Some(server_b) = AgentChatServer::start("two_servers_b", Some(&genesis(&key_b))) else { return };
    scene.key("alice", 31);
    let reviewer = scene.key("bob", 32);
    let _a = scene.serve("ledger", &server_a, database.url());
    let _b = scene.serve("second", &server_b, database.url());
    let mut receipts = Vec::new();
    for (server, title) in [(&server_a, "on A"), (&server_b, "on B")] {
        let output = scene.post(server, "alice", &scene.write("r.json", &requests(title, 1)), &[]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let id = posted(&output)[0]["id"].as_str().unwrap().to_owned();
        let review = json!({"type": "REVIEW", "to": "#review", "content": {"request_id": id, "verdict": "REQUEST_CHANGES"}});
        let output = scene.post(server, "bob", &scene.write("v.json", &review.to_string()), &[]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let outcome = json!({"type": "REVIEW_OUTCOME", "to": "#review", "content": {"request_id": id, "merged": true, "incident": true, "incident_details": "INC"}});
        let output = scene.post(server, "alice", &scene.write("o.json", &outcome.to_string()), &[]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        receipts.extend(posted(&output)[0]["receipts"].as_array().unwrap().clone());
    }
    let ledger = Ledger::open_at(&revcal_elo::LedgerLocation::parse(database.url()).unwrap(), None).unwrap();
    let board = ledger.leaderboard(None).unwrap();
    assert_eq!(board.len(), 1);
    // Two caught bugs at K 40: 1200 + 2 x 50, one reviewer across the two servers.
    assert_eq!(
        (board[0].agent.as_str(), board[0].elo, board[0].reviews),
        (reviewer.agent_id().as_str(), 1300.0, 2)
    );
    let issuer = ledger.issuer_key().public().unwrap();
    assert_eq!(receipts.len(), 2);
    for receipt in &receipts {
        assert!(verify_receipt(&receipt.to_string(), &issuer).is_ok(), "{receipt}");
    }
    assert_eq!(receipts[1]["elo_delta"], 50.0);
}

#[test]
fn a_restarted_ledger_agent_counts_nothing_twice_and_gets_what_was_posted_while_it_was_away() {
    let scene = Scene::new();
    let Some((server, _)) = started("a_restarted_ledger_agent", &scene) else { return };
    scene.key("alice", 31);
    let ledger = scene.path("ledger.sqlite");
    let ledger_text = ledger.display().to_string();
    let mut agent = scene.serve("ledger", &server, &ledger_text);
    let output = scene.post(&server, "alice", &scene.write("first.jsonl", &requests("first", 5)), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(agent.stop(), Some(0), "{}", agent.stderr());

    // While no ledger agent listens: more messages than the server's replay buffer holds (20).
    let poster = {
        let url = server.url();
        let file = scene.write("away.jsonl", &requests("away", 24)).display().to_string();
        scene.spawn(
            "poster",
            &[
                "agentchat",
                "post",
                "--server",
                &url,
                "--key",
                "alice.key",
                &file,
                "--json",
                "--wait",
                "300",
                "-v",
            ],
            &[],
        )
    };
    let started = Instant::now();
    while poster.stderr().matches(" posted index=").count() < 24 {
        assert!(
            started.elapsed() < Duration::from_secs(240),
            "the poster never posted its 24:\n{}",
            poster.stderr()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let again = scene.serve("ledger", &server, &ledger_text);
    let mut poster = poster;
    let started = Instant::now();
    let code = loop {
        if let Some(status) = poster.child.as_mut().unwrap().try_wait().unwrap() {
            poster.child = None;
            break status.code();
        }
        assert!(started.elapsed() < Duration::from_secs(400), "post never finished:\n{}", poster.stderr());
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(code, Some(0), "{}\n{}", poster.stdout(), again.stderr());
    let answers: Vec<Value> =
        poster.stdout().lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(answers.len(), 24);
    assert_eq!(Ledger::open(&ledger).unwrap().message_count().unwrap(), 29);
    let events = again.events();
    let stored: HashSet<&str> = events
        .iter()
        .filter(|event| event["event"] == "stored")
        .map(|event| event["id"].as_str().unwrap())
        .collect();
    assert_eq!(stored.len(), 24, "{}", again.stderr());

    // Restarted once more: the replay buffer brings back stored messages, which count once.
    let mut again = again;
    assert_eq!(again.stop(), Some(0));
    let mut third = scene.serve("ledger", &server, &ledger_text);
    let replayed = wait_for_event(&third, "a replayed message refused", |event| {
        event["event"] == "refused" && event["code"] == "replayed" && event["replay"] == true
    });
    assert!(replayed["msg_id"].is_string());
    assert_eq!(third.stop(), Some(0));
    assert!(
        !third.events().iter().any(|event| event["event"] == "stored" || event["event"] == "posted"),
        "{}",
        third.stderr()
    );
    assert_eq!(Ledger::open(&ledger).unwrap().message_count().unwrap(), 29);
    let check = scene.revcal(&["elo", "check", "--ledger", &ledger_text]).output().unwrap();
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
}
