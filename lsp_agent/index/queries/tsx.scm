; grammar: tree_sitter_typescript.language_tsx
; extensions: .tsx
; wrappers: export_statement ambient_declaration
; leading: decorator
; max-depth: 8
; inherits: typescript jsx
; Tag query: TypeScript's patterns (typescript.scm) plus JSX elements as references to their components (jsx.scm).
