; grammar: tree_sitter_typescript.language_tsx
; extensions: .tsx
; wrappers: export_statement ambient_declaration
; leading: decorator
; max-depth: 8
; inherits: typescript
; Tag query: TypeScript's patterns (typescript.scm) plus JSX elements as references to their components.

(jsx_opening_element name: (identifier) @name.reference.jsx)

(jsx_self_closing_element name: (identifier) @name.reference.jsx)

(jsx_opening_element name: (member_expression
  object: (identifier) @name.reference.jsx
  property: (property_identifier) @name.reference.jsx))

(jsx_self_closing_element name: (member_expression
  object: (identifier) @name.reference.jsx
  property: (property_identifier) @name.reference.jsx))
