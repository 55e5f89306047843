; grammar: tree_sitter_c.language
; extensions: .c .h
; max-depth: 8
; Tag query: @name.definition.KIND / @name.reference.KIND name the symbol, @definition.KIND its span.
; Functions (definitions, and prototypes, which get no chunk), structs, unions and enums with a body (a typedef'd
; anonymous one takes the typedef's name), typedefs, macros and top-level variables; calls and type uses are
; references. A .h file that looks like C++ goes to cpp.scm (see its `detect .h`).

(function_definition declarator: [
  (function_declarator declarator: (identifier) @name.definition.function)
  (pointer_declarator declarator: (function_declarator declarator: (identifier) @name.definition.function))
  (pointer_declarator declarator: (pointer_declarator
    declarator: (function_declarator declarator: (identifier) @name.definition.function)))
]) @definition.function

(declaration declarator: [
  (function_declarator declarator: (identifier) @name.definition.function)
  (pointer_declarator declarator: (function_declarator declarator: (identifier) @name.definition.function))
  (pointer_declarator declarator: (pointer_declarator
    declarator: (function_declarator declarator: (identifier) @name.definition.function)))
]) @definition.function

(struct_specifier name: (type_identifier) @name.definition.struct body: (_)) @definition.struct

(union_specifier name: (type_identifier) @name.definition.union body: (_)) @definition.union

(enum_specifier name: (type_identifier) @name.definition.enum body: (_)) @definition.enum

(type_definition
  type: (struct_specifier !name body: (_))
  declarator: (type_identifier) @name.definition.struct) @definition.struct

(type_definition
  type: (union_specifier !name body: (_))
  declarator: (type_identifier) @name.definition.union) @definition.union

(type_definition
  type: (enum_specifier !name body: (_))
  declarator: (type_identifier) @name.definition.enum) @definition.enum

(type_definition
  declarator: [
    (type_identifier) @name.definition.type
    (pointer_declarator declarator: (type_identifier) @name.definition.type)
    (function_declarator declarator: (parenthesized_declarator (pointer_declarator
      declarator: (type_identifier) @name.definition.type)))
  ]) @definition.type

(preproc_def name: (identifier) @name.definition.constant) @definition.constant

(preproc_function_def name: (identifier) @name.definition.macro) @definition.macro

(translation_unit (declaration declarator: (init_declarator declarator: [
  (identifier) @name.definition.variable
  (array_declarator declarator: (identifier) @name.definition.variable)
  (pointer_declarator declarator: (identifier) @name.definition.variable)
])) @definition.variable)

(field_declaration declarator: [
  (field_identifier) @name.definition.field
  (pointer_declarator declarator: (field_identifier) @name.definition.field)
  (array_declarator declarator: (field_identifier) @name.definition.field)
]) @definition.field

(enumerator name: (identifier) @name.definition.constant) @definition.constant

(call_expression function: [
  (identifier) @name.reference.call
  (field_expression field: (field_identifier) @name.reference.call)
])

(type_identifier) @name.reference.type
