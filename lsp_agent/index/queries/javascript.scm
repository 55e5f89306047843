; grammar: tree_sitter_javascript.language
; extensions: .js .mjs .cjs .jsx
; wrappers: export_statement
; inherits: ecma jsx
; Tag query: @name.definition.KIND / @name.reference.KIND name the symbol, @definition.KIND its span.
; Classes, their methods and fields, functions (declared or assigned), top-level constants; calls, `new`,
; `extends`, imports and JSX elements are references. Shared with TypeScript: ecma.scm; JSX: jsx.scm.

(class_declaration
  name: (identifier) @name.definition.class) @definition.class

(method_definition
  name: [(property_identifier) (private_property_identifier)] @name.definition.method) @definition.method

(field_definition
  property: [(property_identifier) (private_property_identifier)] @name.definition.field) @definition.field

[
  (function_declaration name: (identifier) @name.definition.function)
  (generator_function_declaration name: (identifier) @name.definition.function)
] @definition.function

(expression_statement
  (assignment_expression
    left: (member_expression property: (property_identifier) @name.definition.function)
    right: [(arrow_function) (function_expression)])) @definition.function

(class_heritage [
  (identifier) @name.reference.class
  (member_expression property: (property_identifier) @name.reference.class)
])
