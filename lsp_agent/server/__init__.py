"""The language server: `lsp-agent serve` (pygls), background runs, proposals as workspace edits and code actions."""
