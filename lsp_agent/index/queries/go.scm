; grammar: tree_sitter_go.language
; extensions: .go
; wrappers: type_declaration
; Tag query: @name.definition.KIND / @name.reference.KIND name the symbol, @definition.KIND its span, @scope the
; receiver type of a method (so `func (s *stack) Format` is `stack.Format`).
; Functions, methods, structs with their fields, interfaces with their methods, other named types and aliases,
; top-level constants and variables; calls and type uses are references (imports name packages, not symbols).

(function_declaration
  name: (identifier) @name.definition.function) @definition.function

(method_declaration
  receiver: (parameter_list (parameter_declaration type: [
    (type_identifier) @scope
    (pointer_type (type_identifier) @scope)
    (generic_type type: (type_identifier) @scope)
    (pointer_type (generic_type type: (type_identifier) @scope))
  ]))
  name: (field_identifier) @name.definition.method) @definition.method

(type_spec
  name: (type_identifier) @name.definition.struct
  type: (struct_type)) @definition.struct

(type_spec
  name: (type_identifier) @name.definition.interface
  type: (interface_type)) @definition.interface

(type_spec
  name: (type_identifier) @name.definition.type) @definition.type

(type_alias
  name: (type_identifier) @name.definition.type) @definition.type

(field_declaration
  name: (field_identifier) @name.definition.field) @definition.field

(method_elem
  name: (field_identifier) @name.definition.method) @definition.method

(source_file (const_declaration
  (const_spec name: (identifier) @name.definition.constant) @definition.constant))

(source_file (var_declaration
  (var_spec name: (identifier) @name.definition.variable) @definition.variable))

(call_expression
  function: [
    (identifier) @name.reference.call
    (parenthesized_expression (identifier) @name.reference.call)
    (selector_expression field: (field_identifier) @name.reference.call)
    (parenthesized_expression (selector_expression field: (field_identifier) @name.reference.call))
  ])

(type_identifier) @name.reference.type
