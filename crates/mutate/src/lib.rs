//! Tree-sitter mutation operators: planted bugs for Rust, JavaScript and Python.
