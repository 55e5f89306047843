-- Inline completion in a real headless Neovim, typed as a user types: the keys go through nvim_input() and
-- Neovim's main loop, so InsertCharPre, TextChangedI and CursorMovedI fire as they do at a keyboard.
-- Usage: nvim --clean --headless -c "lua CONFIG='config.json'" -c "luafile ghost.lua" ; writes CONFIG.out.
local cfg = vim.json.decode(assert(io.open(CONFIG)):read("a"))
vim.opt.rtp:prepend(cfg.plugin)

local agent = require("lsp_agent")
local ghost = require("lsp_agent.ghost")
local results = { mode = "ghost" }
local co

local function sleep(ms)
  vim.defer_fn(function() assert(coroutine.resume(co)) end, ms)
  coroutine.yield()
end

local function wait(what, ms, cond)
  local deadline = vim.uv.now() + ms
  while not cond() do
    if vim.uv.now() > deadline then
      error(("timed out after %d ms waiting for %s"):format(ms, what))
    end
    sleep(20)
  end
end

local function marks(buf)
  return vim.tbl_map(function(m)
    local d = m[4]
    return { row = m[2], col = m[3], pos = d.virt_text_pos, text = d.virt_text and d.virt_text[1][1],
      lines = d.virt_lines and vim.tbl_map(function(l) return l[1][1] end, d.virt_lines) or nil }
  end, vim.api.nvim_buf_get_extmarks(buf, ghost.ns, 0, -1, { details = true }))
end

--- Type `keys`, wait until the cursor's line reads `line` (the keys were handled), then `want` ("shown": until
--- a suggestion is shown; else 300 ms, long enough for a request the plugin should not send to come back).
local function type_keys(buf, name, keys, line, want)
  vim.api.nvim_input(keys)
  wait(("the line to read %q after %s"):format(line, name), 5000, function()
    return vim.api.nvim_get_current_line() == line
  end)
  if want == "shown" then
    wait("ghost text (" .. name .. ")", 30000, function() return ghost.current(buf) ~= nil end)
  else
    sleep(300)
  end
  local c = ghost.current(buf)
  results[name] = { ghost = c and c.text or vim.NIL, marks = marks(buf), line = vim.api.nvim_get_current_line(),
    cursor = vim.api.nvim_win_get_cursor(0), mode = vim.api.nvim_get_mode().mode }
end

local function scenario()
  agent.setup({
    cmd = { cfg.python, "-m", "lsp_agent", "serve" },
    cmd_env = { PYTHONPATH = cfg.repo, LITELLM_LOCAL_MODEL_COST_MAP = "True" },
    settings = { model = "openai/qwen2.5-coder-1.5b", apiBase = cfg.base_url, apiKey = "test", completionDebounceMs = 0 },
    progress = false,
    -- keys given to nvim_input() arrive at once; a machine this busy may still ask between two of them
    inline_completion_debounce_ms = 100,
  })
  vim.cmd.edit(vim.fn.fnameescape(cfg.root .. "/greet.py"))
  local buf = vim.api.nvim_get_current_buf()
  wait("the lsp_agent client to attach", 30000, function() return agent.client(buf) ~= nil end)
  results.inline = vim.lsp.inline_completion ~= nil and "native" or "ghost"
  type_keys(buf, "first", "Goprint(greet(", "print(greet(", "shown")
  type_keys(buf, "through", '"wo', 'print(greet("wo')
  type_keys(buf, "accepted", "<M-l>", 'print(greet("world"))')
  -- Python's indent script (on in Neovim's defaults) indents the new line: the cursor ends at column 4.
  type_keys(buf, "block", "<CR>def shout(name):<CR>", "    ", "shown")
  type_keys(buf, "dismissed", "<C-]>", "    ")
  type_keys(buf, "again", "<M-\\>", "    ", "shown")
  type_keys(buf, "accepted_block", "<M-l>", "    return upper")
  type_keys(buf, "call", "<CR>x = shout(", "x = shout(", "shown")
  type_keys(buf, "retyped", "n", "x = shout(n", "shown") -- not the suggestion's next character: ask again
  type_keys(buf, "moved", "<Left>", "x = shout(n")
  vim.api.nvim_input("<Esc>")
  sleep(100)
  results.buffer = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") .. "\n"
  vim.cmd("checkhealth lsp_agent")
  results.health = vim.api.nvim_buf_get_lines(0, 0, -1, false)
end

co = coroutine.create(function()
  local ok, err = xpcall(scenario, debug.traceback)
  results.ok, results.error = ok, (not ok) and tostring(err) or nil
  for _, client in ipairs(vim.lsp.get_clients({ name = "lsp_agent" })) do
    client:stop()
  end
  local f = assert(io.open(cfg.out, "w"))
  f:write(vim.json.encode(results))
  f:close()
  os.exit(ok and 0 or 1)
end)
assert(coroutine.resume(co))
