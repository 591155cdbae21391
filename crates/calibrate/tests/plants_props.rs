//! Property tests: plants files and plant application never panic on arbitrary input, and a
//! plant applied to a line that reads `original` changes exactly that line.

use proptest::prelude::*;
use revcal_calibrate::plants::{Plant, PlantSpec, apply_to, read_plants_file, resolve_specs};

fn plant(line: u32, original: String, mutated: String) -> Plant {
    Plant {
        id: "p".into(),
        file: "a.rs".into(),
        line,
        category: "c".into(),
        operator: "o".into(),
        defect: "d".into(),
        original,
        mutated,
        witness: None,
    }
}

proptest! {
    #[test]
    fn arbitrary_plants_files_are_read_or_refused(text in ".{0,400}", json in any::<bool>()) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(if json { "p.json" } else { "p.yaml" });
        std::fs::write(&path, &text).unwrap();
        if let Ok(specs) = read_plants_file(&path) {
            let _ = resolve_specs(&path, &specs, dir.path());
        }
    }

    #[test]
    fn arbitrary_specs_against_arbitrary_files_never_panic(
        content in ".{0,300}",
        line in 0u32..20,
        original in ".{0,20}",
        mutated in ".{0,20}",
    ) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), &content).unwrap();
        let spec = PlantSpec {
            file: "a.rs".into(), line, original, mutated,
            category: None, defect: None, witness: None, operator: None,
        };
        if let Ok(plants) = resolve_specs(std::path::Path::new("p.yaml"), &[spec], dir.path()) {
            // A resolved plant applies cleanly and changes only its line.
            let planted = apply_to(content.as_bytes(), &[&plants[0]]).unwrap();
            let before: Vec<&str> = content.split('\n').collect();
            let planted = String::from_utf8(planted).unwrap();
            let after: Vec<&str> = planted.split('\n').collect();
            prop_assert_eq!(before.len(), after.len());
            for (index, (b, a)) in before.iter().zip(&after).enumerate() {
                if index + 1 != line as usize {
                    prop_assert_eq!(b, a);
                }
            }
        }
    }

    #[test]
    fn applying_to_arbitrary_bytes_never_panics(
        content in proptest::collection::vec(any::<u8>(), 0..300),
        line in 0u32..30,
        original in ".{0,10}",
        mutated in ".{0,10}",
    ) {
        let _ = apply_to(&content, &[&plant(line, original, mutated)]);
    }
}
