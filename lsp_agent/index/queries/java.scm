; grammar: tree_sitter_java.language
; extensions: .java
; max-depth: 8
; Tag query: @name.definition.KIND / @name.reference.KIND name the symbol, @definition.KIND its span.
; Classes, records, interfaces, annotation types, enums (and their constants), methods, constructors and fields;
; method calls, `new`, superclasses, implemented interfaces, type uses and imports are references.

[
  (class_declaration name: (identifier) @name.definition.class)
  (record_declaration name: (identifier) @name.definition.class)
] @definition.class

[
  (interface_declaration name: (identifier) @name.definition.interface)
  (annotation_type_declaration name: (identifier) @name.definition.interface)
] @definition.interface

(enum_declaration name: (identifier) @name.definition.enum) @definition.enum

[
  (method_declaration name: (identifier) @name.definition.method)
  (constructor_declaration name: (identifier) @name.definition.method)
  (compact_constructor_declaration name: (identifier) @name.definition.method)
  (annotation_type_element_declaration name: (identifier) @name.definition.method)
] @definition.method

(field_declaration
  declarator: (variable_declarator name: (identifier) @name.definition.field)) @definition.field

(constant_declaration
  declarator: (variable_declarator name: (identifier) @name.definition.constant)) @definition.constant

(enum_constant name: (identifier) @name.definition.constant) @definition.constant

(method_invocation name: (identifier) @name.reference.call)

(object_creation_expression type: [
  (type_identifier) @name.reference.class
  (generic_type (type_identifier) @name.reference.class)
  (scoped_type_identifier (type_identifier) @name.reference.class .)
])

(superclass [
  (type_identifier) @name.reference.class
  (generic_type (type_identifier) @name.reference.class)
])

(super_interfaces (type_list [
  (type_identifier) @name.reference.implementation
  (generic_type (type_identifier) @name.reference.implementation)
]))

(type_identifier) @name.reference.type

(import_declaration (scoped_identifier name: (identifier) @name.reference.import))
