; grammar: tree_sitter_python.language
; extensions: .py .pyi .pyw
; wrappers: decorated_definition
; Tag query: @name.definition.KIND / @name.reference.KIND name the symbol, @definition.KIND / @reference.KIND its span.
; Definitions of kind class and function become chunks; a function directly inside a class is a method.

(class_definition
  name: (identifier) @name.definition.class) @definition.class

(function_definition
  name: (identifier) @name.definition.function) @definition.function

(module
  (expression_statement
    (assignment left: (identifier) @name.definition.constant) @definition.constant))

(class_definition
  body: (block
    (expression_statement
      (assignment left: (identifier) @name.definition.attribute) @definition.attribute)))

(call
  function: [
    (identifier) @name.reference.call
    (attribute attribute: (identifier) @name.reference.call)
  ])

(decorator [
  (identifier) @name.reference.call
  (attribute attribute: (identifier) @name.reference.call)
])

(class_definition
  superclasses: (argument_list [
    (identifier) @name.reference.class
    (attribute attribute: (identifier) @name.reference.class)
  ]))

(type (identifier) @name.reference.type)

(import_from_statement
  name: (dotted_name (identifier) @name.reference.import))

(import_from_statement
  name: (aliased_import name: (dotted_name (identifier) @name.reference.import)))
