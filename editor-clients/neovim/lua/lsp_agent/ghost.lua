--- Inline completion as ghost text on Neovim 0.11 (no vim.lsp.inline_completion): asks the server for
--- `textDocument/inlineCompletion` as you type, shows the suggestion through extmarks, accepts and dismisses it.
local M = {}

local METHOD = "textDocument/inlineCompletion"
local INVOKED, AUTOMATIC = 1, 2 -- lsp.InlineCompletionTriggerKind
M.ns = vim.api.nvim_create_namespace("lsp_agent.ghost")
local function highlight()
  vim.api.nvim_set_hl(0, "LspAgentGhostText", { link = "Comment", default = true })
end
highlight()
vim.api.nvim_create_autocmd("ColorScheme", { group = vim.api.nvim_create_augroup("lsp_agent_ghost", {}), callback = highlight })

--- Per buffer: { client_id, timer, request = {client, id}, item = {row, col, text, srow, scol, erow, ecol}, extmark }
local buffers = {}
M.debounce_ms = 30

local function state(bufnr)
  return buffers[bufnr]
end

--- The shown suggestion of `bufnr`: { text = what is still to insert, row, col } (0-based) or nil.
function M.current(bufnr)
  local s = state(bufnr == 0 and vim.api.nvim_get_current_buf() or bufnr)
  if s and s.item and s.extmark then
    return { text = s.item.text, row = s.item.row, col = s.item.col }
  end
end

local function clear(s, bufnr)
  if s.extmark then
    pcall(vim.api.nvim_buf_del_extmark, bufnr, M.ns, s.extmark)
  end
  s.extmark, s.item = nil, nil
end

local has_011 = vim.fn.has("nvim-0.11") == 1

local function cancel(s)
  if s.request then
    local client, id = s.request.client, s.request.id
    s.request = nil
    pcall(function()
      if has_011 then
        client:cancel_request(id)
      else
        client.cancel_request(id) -- Neovim 0.10
      end
    end)
  end
  if s.timer then
    s.timer:stop()
  end
end

--- Draw `item.text` at (item.row, item.col): its first line inline after the cursor, the rest as virtual lines.
local function render(s, bufnr)
  local lines = vim.split(s.item.text, "\n", { plain = true })
  local virt_lines = {}
  for i = 2, #lines do
    virt_lines[#virt_lines + 1] = { { lines[i], "LspAgentGhostText" } }
  end
  s.extmark = vim.api.nvim_buf_set_extmark(bufnr, M.ns, s.item.row, s.item.col, {
    id = s.extmark,
    virt_text = { { lines[1], "LspAgentGhostText" } },
    virt_text_pos = "inline",
    virt_lines = #virt_lines > 0 and virt_lines or nil,
  })
end

local function cursor(bufnr)
  local win = vim.fn.bufwinid(bufnr)
  if win == -1 then
    return nil
  end
  local pos = vim.api.nvim_win_get_cursor(win)
  return pos[1] - 1, pos[2]
end

--- The byte column of an LSP position in `bufnr`.
local function byte_col(bufnr, pos, encoding)
  local line = vim.api.nvim_buf_get_lines(bufnr, pos.line, pos.line + 1, false)[1] or ""
  local ok, col
  if has_011 then
    ok, col = pcall(vim.str_byteindex, line, encoding, pos.character, false)
  else -- Neovim 0.10: str_byteindex(s, index, use_utf16)
    ok, col = pcall(vim.str_byteindex, line, pos.character, encoding ~= "utf-8")
  end
  return ok and col or #line
end

--- The answer of a request sent at `tick` for the cursor at (row, col): show its first item.
local function on_result(bufnr, client, tick, row, col, result)
  local s = state(bufnr)
  if not s or not result or vim.api.nvim_buf_get_changedtick(bufnr) ~= tick or vim.fn.mode() ~= "i" then
    return -- the buffer changed since (a newer request is on its way) or the user left Insert mode
  end
  local crow, ccol = cursor(bufnr)
  local raw = (result.items or result)[1]
  if crow ~= row or ccol ~= col or type(raw) ~= "table" then
    return
  end
  local text = type(raw.insertText) == "table" and raw.insertText.value or raw.insertText
  local srow, scol, erow, ecol = row, col, row, col
  if raw.range then
    srow, erow = raw.range.start.line, raw.range["end"].line
    scol = byte_col(bufnr, raw.range.start, client.offset_encoding)
    ecol = byte_col(bufnr, raw.range["end"], client.offset_encoding)
  end
  -- The item replaces [start, end); what is typed between its start and the cursor is not shown again.
  local typed = srow == row and vim.api.nvim_buf_get_text(bufnr, row, scol, row, col, {})[1] or nil
  if type(text) ~= "string" or typed == nil or text:sub(1, #typed) ~= typed or #text == #typed then
    return
  end
  clear(s, bufnr)
  s.item = { row = row, col = col, text = text:sub(#typed + 1), srow = srow, scol = scol, erow = erow, ecol = ecol }
  render(s, bufnr)
end

--- Ask the server for a suggestion at the cursor (cancelling the request in flight).
function M.request(bufnr, invoked)
  local s = state(bufnr)
  local client = s and vim.lsp.get_client_by_id(s.client_id)
  local row, col = cursor(bufnr)
  if not client or not row then
    return
  end
  cancel(s)
  local params = vim.lsp.util.make_position_params(vim.fn.bufwinid(bufnr), client.offset_encoding)
  params.context = { triggerKind = invoked and INVOKED or AUTOMATIC }
  local tick = vim.api.nvim_buf_get_changedtick(bufnr)
  local ok, id
  local function handler(err, result)
    if s.request and s.request.id == id then
      s.request = nil
    end
    if not err then -- a cancelled or failed request ends quietly (the server reports a model that is down)
      on_result(bufnr, client, tick, row, col, result)
    end
  end
  if has_011 then
    ok, id = client:request(METHOD, params, handler, bufnr)
  else
    ok, id = client.request(METHOD, params, handler, bufnr)
  end
  if ok then
    s.request = { client = client, id = id }
  end
end

--- Whether the shown suggestion still fits the text before the cursor: the user typed its first characters
--- (then it shows the rest) or nothing yet.
local function follow(s, bufnr)
  local item = s.item
  local row, col = cursor(bufnr)
  if not item or row ~= item.row or col < item.col then
    return false
  end
  local typed = vim.api.nvim_buf_get_text(bufnr, row, item.col, row, col, {})[1]
  if item.text:sub(1, #typed) ~= typed or #typed >= #item.text or typed:find("\n") then
    return false
  end
  if #typed > 0 then
    item.text, item.col = item.text:sub(#typed + 1), col
    render(s, bufnr)
  end
  return true
end

--- After a keystroke: a suggestion typed into stays (shortened); anything else drops it and asks again once
--- typing pauses for `debounce_ms`.
local function on_change(bufnr)
  local s = state(bufnr)
  if not s or vim.fn.mode() ~= "i" or follow(s, bufnr) then
    return
  end
  clear(s, bufnr)
  cancel(s)
  s.timer = s.timer or vim.uv.new_timer()
  s.timer:start(M.debounce_ms, 0, vim.schedule_wrap(function()
    if state(bufnr) == s and vim.api.nvim_buf_is_valid(bufnr) and vim.fn.mode() == "i" then
      M.request(bufnr, false)
    end
  end))
end

--- Insert the shown suggestion (the text from the item's start to the cursor is replaced by the item's text).
--- Returns false when none is shown.
function M.accept(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local s = state(bufnr)
  if not (s and s.item and s.extmark) then
    return false
  end
  local item = s.item
  clear(s, bufnr)
  cancel(s)
  local lines = vim.split(item.text, "\n", { plain = true })
  local ecol = item.erow == item.row and math.max(item.ecol, item.col) or item.ecol
  vim.api.nvim_buf_set_text(bufnr, item.row, item.col, item.erow, ecol, lines)
  local last = #lines == 1 and item.col + #lines[1] or #lines[#lines]
  vim.api.nvim_win_set_cursor(vim.fn.bufwinid(bufnr), { item.row + #lines, last })
  return true
end

--- Hide the shown suggestion (and stop the request in flight). Returns false when none is shown.
function M.dismiss(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local s = state(bufnr)
  local shown = s ~= nil and s.extmark ~= nil
  if s then
    clear(s, bufnr)
    cancel(s)
  end
  return shown
end

--- Start ghost text in `bufnr` for the lsp-agent client `client_id`.
function M.attach(bufnr, client_id)
  if buffers[bufnr] then
    buffers[bufnr].client_id = client_id
    return
  end
  buffers[bufnr] = { client_id = client_id }
  local group = vim.api.nvim_create_augroup("lsp_agent_ghost_" .. bufnr, { clear = true })
  local function later() vim.schedule(function() on_change(bufnr) end) end
  -- InsertCharPre comes before the character is in the buffer (and also while keys are still queued, when
  -- TextChangedI waits); both run on_change after it is.
  vim.api.nvim_create_autocmd({ "InsertCharPre", "TextChangedI", "TextChangedP" }, { group = group, buffer = bufnr, callback = later })
  vim.api.nvim_create_autocmd("CursorMovedI", {
    group = group,
    buffer = bufnr,
    callback = function()
      vim.schedule(function()
        local s = state(bufnr)
        if s and s.item and not follow(s, bufnr) then
          M.dismiss(bufnr) -- the cursor left the suggestion (an arrow key, a click)
        end
      end)
    end,
  })
  vim.api.nvim_create_autocmd({ "InsertLeave", "BufLeave" }, { group = group, buffer = bufnr, callback = function() M.dismiss(bufnr) end })
  vim.api.nvim_create_autocmd({ "BufDelete", "LspDetach" }, {
    group = group,
    buffer = bufnr,
    callback = function(args)
      if args.event == "LspDetach" and (args.data or {}).client_id ~= buffers[bufnr].client_id then
        return
      end
      M.detach(bufnr)
    end,
  })
end

--- Buffer-local Insert-mode keys: `keys` = { accept, dismiss, trigger } (a key or false each). With `native`
--- (Neovim 0.12's vim.lsp.inline_completion) accept calls its get(); there, dismiss and trigger are Neovim's own.
--- A key with nothing to do types itself.
function M.map_keys(bufnr, keys, native)
  local function map(key, action, desc)
    if not key then
      return
    end
    vim.keymap.set("i", key, function()
      if not action() then
        vim.api.nvim_feedkeys(vim.keycode(key), "in", false) -- before keys typed after it
      end
    end, { buffer = bufnr, desc = desc })
  end
  if native then
    map(keys.accept, function() return vim.lsp.inline_completion.get() end, "lsp-agent: accept the inline completion")
    return
  end
  map(keys.accept, function() return M.accept(bufnr) end, "lsp-agent: accept the inline completion")
  map(keys.dismiss, function() return M.dismiss(bufnr) end, "lsp-agent: dismiss the inline completion")
  map(keys.trigger, function()
    M.request(bufnr, true)
    return true
  end, "lsp-agent: ask for an inline completion now")
end

--- Stop ghost text in `bufnr`.
function M.detach(bufnr)
  local s = buffers[bufnr]
  if not s then
    return
  end
  M.dismiss(bufnr)
  if s.timer then
    s.timer:close()
  end
  buffers[bufnr] = nil
  pcall(vim.api.nvim_del_augroup_by_name, "lsp_agent_ghost_" .. bufnr)
end

return M
