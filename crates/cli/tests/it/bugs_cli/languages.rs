//! `revcal bugs mine` on Go and Java histories, built here with the real toolchains: a Go
//! module whose fix came with a test (`go test`), and a Maven project with JUnit 4 (`mvn`,
//! offline, from the Maven repository Debian's packages install). A toolchain that is missing
//! skips its test with a notice on stderr.

use super::{commit, git, revcal, stderr};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn runs(program: &str, args: &[&str]) -> bool {
    Command::new(program).args(args).output().is_ok_and(|output| output.status.success())
}

#[test]
fn a_go_fix_is_mined_with_go_test_run_on_its_test_as_the_witness() {
    if !runs("go", &["version"]) {
        eprintln!("skipped: Go is not installed (apt-get install golang-go)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("shop");
    std::fs::create_dir_all(repo.join("price")).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    let code = "package price\n\n// Discount takes percent off price.\nfunc Discount(price, percent int) int {\n\treturn price * percent / 100\n}\n\n// Total adds prices.\nfunc Total(prices []int) int {\n\tt := 0\n\tfor _, p := range prices {\n\t\tt += p\n\t}\n\treturn t\n}\n";
    let test = "package price\n\nimport \"testing\"\n\nfunc TestTotal(t *testing.T) {\n\tif got := Total([]int{1, 2}); got != 3 {\n\t\tt.Fatalf(\"Total = %d\", got)\n\t}\n}\n";
    commit(
        &repo,
        &[
            ("go.mod", "module example.com/shop\n\ngo 1.19\n"),
            ("price/price.go", code),
            ("price/price_test.go", test),
        ],
        "Start",
    );
    let fixed = code.replace("return price * percent / 100", "return price - price*percent/100");
    let tested = format!(
        "{test}\nfunc TestDiscount(t *testing.T) {{\n\tif got := Discount(200, 10); got != 180 {{\n\t\tt.Fatalf(\"Discount = %d\", got)\n\t}}\n}}\n"
    );
    commit(
        &repo,
        &[("price/price.go", &fixed), ("price/price_test.go", &tested)],
        "Discount is taken off the price",
    );

    // The default test command: `go test ./...`, chosen by go.mod.
    let mined = revcal(&repo, &["bugs", "mine", "--json"]);
    assert_eq!(mined.status.code(), Some(0), "{}", stderr(&mined));
    let report: Value = serde_json::from_slice(&mined.stdout).unwrap();
    assert_eq!(report["candidates"], 1, "{report:#}");
    let bugs = report["verified"].as_array().unwrap();
    assert_eq!(bugs.len(), 1, "{report:#}");
    assert_eq!(bugs[0]["file"], "price/price.go");
    assert_eq!(bugs[0]["witness"], "go test -count=1 -run '^TestDiscount$' ./price", "{report:#}");
    // The witness is a real command: it passes on the fix, which the work tree holds, and
    // fails once the bug's patch is applied.
    let run_witness = || {
        Command::new("sh")
            .args(["-c", bugs[0]["witness"].as_str().unwrap()])
            .current_dir(&repo)
            .env("XDG_CACHE_HOME", dir.path().join("cache"))
            .output()
            .unwrap()
    };
    let passed = run_witness();
    assert!(passed.status.success(), "{}", String::from_utf8_lossy(&passed.stdout));
    std::fs::write(dir.path().join("bug.patch"), bugs[0]["patch"].as_str().unwrap()).unwrap();
    git(&repo, &["apply", "../bug.patch"]);
    let failed = run_witness();
    assert!(!failed.status.success(), "{}", String::from_utf8_lossy(&failed.stdout));
    assert!(String::from_utf8_lossy(&failed.stdout).contains("--- FAIL: TestDiscount"));
}

const POM: &str = r#"<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>acme</groupId><artifactId>calc</artifactId><version>1</version>
  <properties>
    <maven.compiler.source>17</maven.compiler.source><maven.compiler.target>17</maven.compiler.target>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>4.13.2</version><scope>test</scope></dependency>
  </dependencies>
  <build><plugins>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-resources-plugin</artifactId><version>2.6</version></plugin>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId><version>3.10.1</version></plugin>
    <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-surefire-plugin</artifactId><version>2.22.3</version></plugin>
  </plugins></build>
</project>
"#;

/// The Maven repository Debian's packages fill (`libmaven-compiler-plugin-java`,
/// `libmaven-resources-plugin-java`, `libsurefire-java`, `junit4`): Maven runs offline on it.
const DEBIAN_MAVEN_REPO: &str = "/usr/share/maven-repo";

#[test]
fn a_java_fix_is_mined_with_surefire_selecting_its_junit_test_as_the_witness() {
    let plugins = Path::new(DEBIAN_MAVEN_REPO).join("org/apache/maven/plugins/maven-surefire-plugin/2.22.3");
    if !runs("mvn", &["-v"]) || !plugins.is_dir() {
        eprintln!(
            "skipped: Maven cannot run offline here (needs mvn and, in {DEBIAN_MAVEN_REPO}, surefire 2.22.3: apt-get install maven libmaven-compiler-plugin-java libmaven-resources-plugin-java libsurefire-java junit4)"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("calc");
    std::fs::create_dir_all(repo.join("src/main/java/acme")).unwrap();
    std::fs::create_dir_all(repo.join("src/test/java/acme")).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    let code = "package acme;\n\npublic class Calc {\n    public static int discount(int price, int percent) {\n        return price * percent / 100;\n    }\n\n    public static int total(int[] prices) {\n        int t = 0;\n        for (int p : prices) {\n            t += p;\n        }\n        return t;\n    }\n}\n";
    let test = "package acme;\n\nimport static org.junit.Assert.assertEquals;\n\nimport org.junit.Test;\n\npublic class CalcTest {\n    @Test\n    public void totals() {\n        assertEquals(3, Calc.total(new int[] {1, 2}));\n    }\n}\n";
    commit(
        &repo,
        &[
            ("pom.xml", POM),
            (".gitignore", "target/\n"),
            ("src/main/java/acme/Calc.java", code),
            ("src/test/java/acme/CalcTest.java", test),
        ],
        "Start",
    );
    let fixed = code.replace("return price * percent / 100;", "return price - price * percent / 100;");
    let tested = test.replace(
        "    }\n}\n",
        "    }\n\n    @Test\n    public void discountsAreTakenOff() {\n        assertEquals(180, Calc.discount(200, 10));\n    }\n}\n",
    );
    commit(
        &repo,
        &[("src/main/java/acme/Calc.java", &fixed), ("src/test/java/acme/CalcTest.java", &tested)],
        "Discount is taken off the price",
    );

    let test_cmd = format!("mvn -o -q -B -Dmaven.repo.local={DEBIAN_MAVEN_REPO} test");
    let mined = revcal(&repo, &["bugs", "mine", "--test-cmd", &test_cmd, "--json"]);
    assert_eq!(mined.status.code(), Some(0), "{}", stderr(&mined));
    let report: Value = serde_json::from_slice(&mined.stdout).unwrap();
    let bugs = report["verified"].as_array().unwrap();
    assert_eq!(bugs.len(), 1, "{report:#}");
    assert_eq!(bugs[0]["file"], "src/main/java/acme/Calc.java");
    assert_eq!(
        bugs[0]["witness"],
        format!("{test_cmd} '-Dtest=acme.CalcTest#discountsAreTakenOff'"),
        "{report:#}"
    );
}
