//! TypeScript (`.ts .mts .cts`) and TSX (`.tsx`): JavaScript's operators and rules over the TypeScript grammar,
//! which extends JavaScript's. Types are opaque: a mutant changes what the code does, never
//! what it declares (a changed type is a compile error or nothing at all).

use super::javascript;
use super::{Grammar, Operator};
use crate::Language;
use std::sync::LazyLock;

pub(super) static GRAMMAR: Grammar = Grammar {
    grammar: || tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
    comments: &["comment", "html_comment"],
    opaque,
    skipped_item: |_, _, _| None,
    mutate: javascript::mutate,
    operators: || OPERATORS.as_slice(),
    units: javascript::UNITS,
    indented_units: false,
    verify_rejections: true,
    unit_baselines: false,
    wrapped_units: WRAPPED_UNITS,
    statement_lists: javascript::STATEMENT_LISTS,
    element_lists: javascript::ELEMENT_LISTS,
    starts_closed: javascript::starts_closed,
};

/// TSX: the same over the grammar that also reads JSX.
pub(super) static TSX_GRAMMAR: Grammar = Grammar {
    grammar: || tree_sitter_typescript::LANGUAGE_TSX.into(),
    operators: || TSX_OPERATORS.as_slice(),
    ..GRAMMAR
};

/// JavaScript's, and TypeScript's own kind of class field.
const WRAPPED_UNITS: &[(&str, &str, &str)] = &[
    ("pair", "({", "})"),
    ("public_field_definition", "class C {", "}"),
    ("method_definition", "class C {", "}"),
    ("switch_case", "switch (0) {", "}"),
    ("switch_default", "switch (0) {", "}"),
    ("parenthesized_expression", "", ";"),
    ("arguments", "f", ";"),
];

/// JavaScript's operators, as TypeScript's and as TSX's.
static OPERATORS: LazyLock<Vec<Operator>> = LazyLock::new(|| as_language(Language::TypeScript));
static TSX_OPERATORS: LazyLock<Vec<Operator>> = LazyLock::new(|| as_language(Language::Tsx));

fn as_language(language: Language) -> Vec<Operator> {
    javascript::OPERATORS.iter().map(|operator| Operator { language, ..*operator }).collect()
}

/// JavaScript's opaque kinds, and every kind that only speaks of types.
fn opaque(kind: &str) -> bool {
    javascript::opaque(kind)
        || matches!(
            kind,
            "type_annotation"
                | "opting_type_annotation"
                | "omitting_type_annotation"
                | "adding_type_annotation"
                | "asserts_annotation"
                | "type_predicate_annotation"
                | "type_alias_declaration"
                | "interface_declaration"
                | "ambient_declaration"
                | "abstract_method_signature"
                | "type_arguments"
                | "type_parameters"
                | "literal_type"
                | "union_type"
                | "intersection_type"
                | "object_type"
                | "generic_type"
                | "tuple_type"
                | "function_type"
                | "conditional_type"
                | "lookup_type"
                | "type_query"
                | "index_type_query"
        )
}

#[cfg(test)]
mod tests {
    use crate::{Language, Options, analyze};

    fn mutants(source: &str) -> Vec<(String, String)> {
        analyze(std::path::Path::new("a.ts"), source, &Options::default())
            .unwrap()
            .mutants
            .into_iter()
            .map(|m| (m.operator.clone(), m.mutated_line.trim().to_owned()))
            .collect()
    }

    #[test]
    fn tsx_reads_jsx_and_mutates_the_code_around_it() {
        let source =
            "export function Badge({ n }: { n: number }) {\n  return n > 9 ? <b>9+</b> : <i>{n}</i>;\n}\n";
        let analysis = analyze(std::path::Path::new("a.tsx"), source, &Options::default()).unwrap();
        assert!(analysis.warnings.is_empty(), "{:?}", analysis.warnings);
        let lines: Vec<&str> = analysis.mutants.iter().map(|m| m.mutated_line.trim()).collect();
        assert!(lines.contains(&"return n >= 9 ? <b>9+</b> : <i>{n}</i>;"), "{lines:?}");
        assert!(analysis.mutants.iter().all(|m| m.language == Language::Tsx));
    }

    #[test]
    fn code_is_mutated_and_types_are_not() {
        let source = "type Bit = 0 | 1;\ninterface Box { size: 1 }\nexport function last<T>(xs: Array<T>, n: number = 1): T | undefined {\n  if (xs.length > 0 && n >= 1) {\n    return xs[xs.length - 1];\n  }\n  return undefined;\n}\n";
        let found = mutants(source);
        assert!(
            found.contains(&("comparison-boundary".into(), "if (xs.length >= 0 && n >= 1) {".into())),
            "{found:?}"
        );
        assert!(
            found.contains(&("and-or-swap".into(), "if (xs.length > 0 || n >= 1) {".into())),
            "{found:?}"
        );
        assert!(found.contains(&("minus-one-dropped".into(), "return xs[xs.length];".into())), "{found:?}");
        // Nothing on the type lines, nor in the signature's types.
        let analysis = analyze(std::path::Path::new("a.ts"), source, &Options::default()).unwrap();
        assert!(analysis.warnings.is_empty(), "{:?}", analysis.warnings);
        assert!(
            analysis.mutants.iter().all(|m| m.line >= 3 && m.language == Language::TypeScript),
            "{analysis:?}"
        );
        // On the signature only the default value may change, never `Array<T>` or `T | undefined`.
        for mutant in analysis.mutants.iter().filter(|m| m.line == 3) {
            assert!(
                mutant.mutated_line.contains("xs: Array<T>, n: number = ")
                    && mutant.mutated_line.ends_with("): T | undefined {"),
                "{mutant:?}"
            );
        }
    }
}
