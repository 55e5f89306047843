; grammar: tree_sitter_cpp.language
; extensions: .cc .cpp .cxx .c++ .hh .hpp .hxx .h++ .ipp .tpp .inl
; detect .h: ^\s*(?:namespace(?:\s+[\w:]+)?\s*\{|template\s*<|class\s+\w+|(?:public|private|protected)\s*:)
; wrappers: template_declaration
; max-depth: 10
; Tag query: @name.definition.KIND / @name.reference.KIND name the symbol, @definition.KIND its span, @scope the
; class a member defined outside it belongs to (`void Keyset::reset() {}` is `Keyset.reset`).
; Classes, structs, unions, enums, namespaces, functions and methods (definitions, and prototypes, which get no
; chunk), fields, type aliases, typedefs and macros; calls, `new`, base classes and type uses are references.

; Functions and methods: the name in a function declarator (below any `*` or `&`), plain or `Scope::name`; its
; span is the definition or prototype around it (spans without a name of their own name nothing). One simple
; pattern per form: a query enumerating every declarator shape takes half a second to compile.
[(function_definition) (declaration) (field_declaration)] @definition.function

(function_declarator
  declarator: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name.definition.function)

(function_declarator declarator: (qualified_identifier
  scope: (_) @scope
  name: [(identifier) (destructor_name) (operator_name)] @name.definition.function))

(function_declarator declarator: (qualified_identifier
  scope: (_) @scope
  name: (qualified_identifier scope: (_) @scope name: [(identifier) (destructor_name) (operator_name)] @name.definition.function)))

(class_specifier name: [
  (type_identifier) @name.definition.class
  (template_type name: (type_identifier) @name.definition.class)
] body: (_)) @definition.class

(struct_specifier name: [
  (type_identifier) @name.definition.struct
  (template_type name: (type_identifier) @name.definition.struct)
] body: (_)) @definition.struct

(union_specifier name: (type_identifier) @name.definition.union body: (_)) @definition.union

(enum_specifier name: (type_identifier) @name.definition.enum body: (_)) @definition.enum

(namespace_definition
  name: [(namespace_identifier) (nested_namespace_specifier)] @name.definition.namespace) @definition.namespace

(type_definition
  type: (struct_specifier !name body: (_))
  declarator: (type_identifier) @name.definition.struct) @definition.struct

(type_definition
  declarator: [
    (type_identifier) @name.definition.type
    (pointer_declarator declarator: (type_identifier) @name.definition.type)
  ]) @definition.type

(alias_declaration name: (type_identifier) @name.definition.type) @definition.type

(field_declaration declarator: [
  (field_identifier) @name.definition.field
  (pointer_declarator declarator: (field_identifier) @name.definition.field)
  (array_declarator declarator: (field_identifier) @name.definition.field)
  (reference_declarator (field_identifier) @name.definition.field)
]) @definition.field

(preproc_def name: (identifier) @name.definition.constant) @definition.constant

(preproc_function_def name: (identifier) @name.definition.macro) @definition.macro

(enumerator name: (identifier) @name.definition.constant) @definition.constant

(call_expression function: [
  (identifier) @name.reference.call
  (field_expression field: (field_identifier) @name.reference.call)
  (qualified_identifier name: (identifier) @name.reference.call)
  (template_function name: (identifier) @name.reference.call)
  (qualified_identifier name: (template_function name: (identifier) @name.reference.call))
])

(new_expression type: [
  (type_identifier) @name.reference.class
  (template_type name: (type_identifier) @name.reference.class)
  (qualified_identifier name: (type_identifier) @name.reference.class)
])

(base_class_clause [
  (type_identifier) @name.reference.class
  (template_type name: (type_identifier) @name.reference.class)
  (qualified_identifier name: (type_identifier) @name.reference.class)
])

(type_identifier) @name.reference.type
