; grammar: tree_sitter_rust.language
; extensions: .rs
; leading: attribute_item
; max-depth: 8
; Tag query: @name.definition.KIND / @name.reference.KIND name the symbol, @definition.KIND its span.
; Structs, enums (and their variants), unions, traits, impl blocks (named by their type, so methods read
; `Type.method`), functions, modules, type aliases, constants, statics and macros; calls, macro calls, type uses,
; implemented traits and `use` imports are references.

(struct_item name: (type_identifier) @name.definition.struct) @definition.struct

(enum_item name: (type_identifier) @name.definition.enum) @definition.enum

(union_item name: (type_identifier) @name.definition.union) @definition.union

(trait_item name: (type_identifier) @name.definition.trait) @definition.trait

(impl_item
  type: [
    (type_identifier) @name.definition.impl
    (generic_type type: (type_identifier) @name.definition.impl)
    (scoped_type_identifier name: (type_identifier) @name.definition.impl)
    (generic_type type: (scoped_type_identifier name: (type_identifier) @name.definition.impl))
    (primitive_type) @name.definition.impl
    (reference_type type: [(type_identifier) (primitive_type)] @name.definition.impl)
  ]) @definition.impl

[
  (function_item name: (identifier) @name.definition.function)
  (function_signature_item name: (identifier) @name.definition.function)
] @definition.function

(mod_item name: (identifier) @name.definition.module) @definition.module

[
  (type_item name: (type_identifier) @name.definition.type)
  (associated_type name: (type_identifier) @name.definition.type)
] @definition.type

[
  (const_item name: (identifier) @name.definition.constant)
  (static_item name: (identifier) @name.definition.constant)
] @definition.constant

(macro_definition name: (identifier) @name.definition.macro) @definition.macro

(field_declaration name: (field_identifier) @name.definition.field) @definition.field

(enum_variant name: (identifier) @name.definition.variant) @definition.variant

(call_expression
  function: [
    (identifier) @name.reference.call
    (field_expression field: (field_identifier) @name.reference.call)
    (scoped_identifier name: (identifier) @name.reference.call)
    (generic_function function: (identifier) @name.reference.call)
    (generic_function function: (field_expression field: (field_identifier) @name.reference.call))
    (generic_function function: (scoped_identifier name: (identifier) @name.reference.call))
  ])

(macro_invocation macro: [
  (identifier) @name.reference.macro
  (scoped_identifier name: (identifier) @name.reference.macro)
])

(impl_item
  trait: [
    (type_identifier) @name.reference.implementation
    (generic_type type: (type_identifier) @name.reference.implementation)
    (scoped_type_identifier name: (type_identifier) @name.reference.implementation)
  ])

(type_identifier) @name.reference.type

(use_declaration argument: [
  (identifier) @name.reference.import
  (scoped_identifier name: (identifier) @name.reference.import)
  (use_as_clause path: [(identifier) (scoped_identifier name: (identifier))] @name.reference.import)
])

(use_list [
  (identifier) @name.reference.import
  (scoped_identifier name: (identifier) @name.reference.import)
])
