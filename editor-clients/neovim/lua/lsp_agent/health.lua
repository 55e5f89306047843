--- :checkhealth lsp_agent -- does the server start, which model is configured, is the index ready?
local M = {}

local function status_of(client)
  local method = "workspace/executeCommand"
  local params = { command = "lspAgent.status", arguments = {} }
  local resp
  if vim.fn.has("nvim-0.11") == 1 then
    resp = client:request_sync(method, params, 5000)
  else
    resp = client.request_sync(method, params, 5000)
  end
  if not resp then
    return nil, "no answer within 5 s"
  end
  if resp.err then
    return nil, resp.err.message or vim.inspect(resp.err)
  end
  return resp.result
end

--- Start the server command once and wait for its answer to `initialize`: (ms, nil) or (nil, error).
function M.probe(cmd, env, timeout_ms)
  local body = vim.json.encode({ jsonrpc = "2.0", id = 1, method = "initialize",
    params = { processId = vim.NIL, rootUri = vim.NIL, capabilities = vim.empty_dict() } })
  local out, err_text = "", ""
  local started = vim.uv.hrtime()
  local ok, proc = pcall(vim.system, cmd, {
    stdin = true,
    env = env,
    stdout = function(_, data) out = out .. (data or "") end,
    stderr = function(_, data) err_text = err_text .. (data or "") end,
  })
  if not ok then
    return nil, tostring(proc)
  end
  proc:write(("Content-Length: %d\r\n\r\n%s"):format(#body, body))
  local answered = vim.wait(timeout_ms or 15000, function()
    return out:find('"id":%s*1') ~= nil or proc:is_closing()
  end, 20)
  local ms = (vim.uv.hrtime() - started) / 1e6
  proc:kill(15)
  if answered and out:find('"id":%s*1') then
    return ms, nil
  end
  local why = answered and "the server exited" or "no answer to initialize"
  return nil, ("%s; stderr: %s"):format(why, vim.trim(err_text):sub(-300))
end

function M.check()
  local h = vim.health
  h.start("lsp_agent")
  if vim.fn.has("nvim-0.10") == 1 then
    h.ok("Neovim " .. tostring(vim.version()))
  else
    h.error("Neovim 0.10 or newer is needed")
  end
  local ok, agent = pcall(require, "lsp_agent")
  if not ok or not agent.did_setup then
    h.error('setup() was not called', { 'add require("lsp_agent").setup({ settings = { model = "..." } }) to your config' })
    return
  end
  local cmd = agent.config.cmd
  if vim.fn.executable(cmd[1]) == 1 then
    h.ok("server command: " .. table.concat(cmd, " "))
  else
    h.error(("server command not found: %s"):format(cmd[1]), {
      "pip install lsp-agent (or the repository with pip install -e .)",
      'or point cmd at a virtualenv: cmd = { "/path/to/venv/bin/python", "-m", "lsp_agent", "serve" }',
    })
  end

  local client = agent.client()
  if not client then
    local ms, perr = M.probe(cmd, agent.config.cmd_env)
    if ms then
      h.ok(("the server starts (answered initialize in %d ms)"):format(ms))
    else
      h.error("the server does not start: " .. perr, { "run the command in a terminal to see why" })
    end
    h.warn("the server is not running in this Neovim", { "open a file inside a project (root markers: "
      .. table.concat(agent.config.root_markers, ", ") .. "), then check :LspInfo / :checkhealth vim.lsp" })
    local model = agent.config.settings.model or vim.env.LSP_AGENT_MODEL
    if model then
      h.ok("model (from settings/environment): " .. model)
    else
      h.warn("no model configured", { 'settings = { model = "openai/gpt-4o-mini" } or LSP_AGENT_MODEL' })
    end
    return
  end
  h.ok(("server running (client id %d, root %s)"):format(client.id, client.root_dir or client.config.root_dir or "?"))
  local status, err = status_of(client)
  if not status then
    h.error("lspAgent.status failed: " .. tostring(err))
    return
  end
  if type(status.model) == "string" and status.model ~= "" then
    h.ok("model: " .. status.model)
  else
    h.error("no model configured", {
      'setup({ settings = { model = "openai/gpt-4o-mini" } }) or set LSP_AGENT_MODEL',
      "see :help lsp_agent-models for OpenAI, Anthropic and Ollama",
    })
  end
  local index = type(status.index) == "table" and status.index or {}
  if index.ready == true then
    h.ok(("index ready: %s files, %s chunks, %s symbols"):format(
      tostring(index.files), tostring(index.chunks), tostring(index.symbols)))
  else
    h.warn("index not ready yet (still building); :AgentReindex rebuilds it")
  end
  for _, e in ipairs(type(status.settingsErrors) == "table" and status.settingsErrors or {}) do
    h.warn("setting: " .. tostring(e))
  end
  local completion = type(status.completion) == "table" and status.completion or nil
  if completion and completion.enabled then
    local model = tostring(completion.model)
    if completion.modelDown then
      h.warn("inline completion paused: the completion model " .. model .. " did not answer (:LspLog has why)")
    else
      h.ok(("inline completion: %s (%s requests, %s suggestions)"):format(
        model, tostring(completion.requests), tostring(completion.suggestions)))
    end
  elseif completion then
    h.info("inline completion off: " .. tostring(completion.reason or "no fill-in-the-middle model")
      .. " (settings.completionModel: see :help lsp_agent-inline-completion)")
  end
  local pending = type(status.pending) == "table" and #status.pending or 0
  h.info(("%d run(s) known, %d with pending edits"):format(type(status.runs) == "table" and #status.runs or 0, pending))
end

return M
