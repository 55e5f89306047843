; fragment: JSX elements as references to their components (javascript.scm and tsx.scm inherit them)

(jsx_opening_element name: (identifier) @name.reference.jsx)

(jsx_self_closing_element name: (identifier) @name.reference.jsx)

(jsx_opening_element name: (member_expression
  object: (identifier) @name.reference.jsx
  property: (property_identifier) @name.reference.jsx))

(jsx_self_closing_element name: (member_expression
  object: (identifier) @name.reference.jsx
  property: (property_identifier) @name.reference.jsx))
