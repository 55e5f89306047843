; grammar: tree_sitter_typescript.language_typescript
; extensions: .ts .mts .cts
; wrappers: export_statement ambient_declaration
; leading: decorator
; max-depth: 8
; inherits: ecma
; Tag query: @name.definition.KIND / @name.reference.KIND name the symbol, @definition.KIND its span.
; Classes (abstract too), interfaces, type aliases, enums, namespaces and modules, methods and their signatures,
; fields, functions (declared, declared `declare`, or assigned), top-level constants; calls, `new`, `extends` and
; `implements`, type uses and imports are references. Shared with JavaScript: ecma.scm; tsx.scm inherits these.

[
  (class_declaration name: (type_identifier) @name.definition.class)
  (abstract_class_declaration name: (type_identifier) @name.definition.class)
] @definition.class

(interface_declaration
  name: (type_identifier) @name.definition.interface) @definition.interface

(type_alias_declaration
  name: (type_identifier) @name.definition.type) @definition.type

(enum_declaration
  name: (identifier) @name.definition.enum) @definition.enum

(internal_module
  name: [(identifier) (nested_identifier)] @name.definition.namespace) @definition.namespace

(module name: [(identifier) (nested_identifier)] @name.definition.module) @definition.module

(module name: (string (string_fragment) @name.definition.module)) @definition.module

[
  (method_definition name: [(property_identifier) (private_property_identifier)] @name.definition.method)
  (method_signature name: [(property_identifier) (private_property_identifier)] @name.definition.method)
  (abstract_method_signature name: [(property_identifier) (private_property_identifier)] @name.definition.method)
] @definition.method

(public_field_definition
  name: [(property_identifier) (private_property_identifier)] @name.definition.method
  value: [(arrow_function) (function_expression)]) @definition.method

(public_field_definition
  name: [(property_identifier) (private_property_identifier)] @name.definition.field) @definition.field

[
  (function_declaration name: (identifier) @name.definition.function)
  (generator_function_declaration name: (identifier) @name.definition.function)
  (function_signature name: (identifier) @name.definition.function)
] @definition.function

(extends_clause value: [
  (identifier) @name.reference.class
  (member_expression property: (property_identifier) @name.reference.class)
])

(implements_clause (type_identifier) @name.reference.implementation)

(type_identifier) @name.reference.type
