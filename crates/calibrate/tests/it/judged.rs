//! What a judge is told about a plant: its JSON form without the id or the witness.

use revcal_calibrate::{JudgedForm, Plant};
use revcal_judge::JudgeRequest;

#[test]
fn a_request_never_carries_the_plants_id_or_witness() {
    let mut plant =
        Plant::new("src/window.rs", 12, "off-by-one", "relational-boundary", "    a < b", "    a <= b")
            .with_defect("`<` became `<=`")
            .with_witness("cargo test");
    plant.id = "plants-file#1".into();
    let parsed =
        revcal_findings::parse_findings(r#"[{"file": "src/window.rs", "line": 12, "message": "x"}]"#);
    let json = serde_json::to_value(JudgeRequest::new(plant.judged(), &parsed.findings[0])).unwrap();
    assert!(json["plant"].get("id").is_none() && json["plant"].get("witness").is_none(), "{json}");
    let keys: Vec<&str> = json["plant"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["file", "line", "category", "operator", "defect", "original", "mutated"]);
    assert_eq!(json["plant"]["file"], "src/window.rs");
    assert_eq!(json["plant"]["defect"], "`<` became `<=`");
}
