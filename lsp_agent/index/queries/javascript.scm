; grammar: tree_sitter_javascript.language
; extensions: .js .mjs .cjs .jsx
; wrappers: export_statement
; Tag query: @name.definition.KIND / @name.reference.KIND name the symbol, @definition.KIND its span.
; Classes, their methods and fields, functions (declared or assigned), top-level constants; calls, `new`,
; `extends`, imports and JSX elements are references.

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

[
  (lexical_declaration (variable_declarator
    name: (identifier) @name.definition.function
    value: [(arrow_function) (function_expression) (generator_function)]))
  (variable_declaration (variable_declarator
    name: (identifier) @name.definition.function
    value: [(arrow_function) (function_expression) (generator_function)]))
] @definition.function

(expression_statement
  (assignment_expression
    left: (member_expression property: (property_identifier) @name.definition.function)
    right: [(arrow_function) (function_expression)])) @definition.function

(program [
  (lexical_declaration (variable_declarator name: (identifier) @name.definition.constant))
  (variable_declaration (variable_declarator name: (identifier) @name.definition.constant))
] @definition.constant)

(program (export_statement declaration: [
  (lexical_declaration (variable_declarator name: (identifier) @name.definition.constant))
  (variable_declaration (variable_declarator name: (identifier) @name.definition.constant))
] @definition.constant))

(call_expression
  function: [
    (identifier) @name.reference.call
    (member_expression property: (property_identifier) @name.reference.call)
  ])

(new_expression
  constructor: [
    (identifier) @name.reference.class
    (member_expression property: (property_identifier) @name.reference.class)
  ])

(class_heritage [
  (identifier) @name.reference.class
  (member_expression property: (property_identifier) @name.reference.class)
])

(import_specifier name: (identifier) @name.reference.import)

(import_clause (identifier) @name.reference.import)

(jsx_opening_element name: (identifier) @name.reference.jsx)

(jsx_self_closing_element name: (identifier) @name.reference.jsx)

(jsx_opening_element name: (member_expression
  object: (identifier) @name.reference.jsx
  property: (property_identifier) @name.reference.jsx))

(jsx_self_closing_element name: (member_expression
  object: (identifier) @name.reference.jsx
  property: (property_identifier) @name.reference.jsx))
