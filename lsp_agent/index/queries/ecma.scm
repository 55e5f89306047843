; fragment: patterns JavaScript and TypeScript share (javascript.scm and typescript.scm inherit them)
; Tag query: @name.definition.KIND / @name.reference.KIND name the symbol, @definition.KIND its span.
; Functions assigned to a variable, top-level constants; calls, `new` and imports are references.

[
  (lexical_declaration (variable_declarator
    name: (identifier) @name.definition.function
    value: [(arrow_function) (function_expression) (generator_function)]))
  (variable_declaration (variable_declarator
    name: (identifier) @name.definition.function
    value: [(arrow_function) (function_expression) (generator_function)]))
] @definition.function

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

(import_specifier name: (identifier) @name.reference.import)

(import_clause (identifier) @name.reference.import)
