-- evalspec for Neovim: starts evalspec-lsp for YAML/JSON buffers.
--
-- The server decides which files are Weval blueprints or AgentV eval files and stays silent on
-- every other YAML/JSON file, so attaching it to all of them is safe.
--
--   require("evalspec").setup({ cmd = { "evalspec-lsp" } })
--
-- Neovim 0.8+ uses vim.lsp.start (which reuses a client per root); 0.7 uses vim.lsp.start_client
-- and vim.lsp.buf_attach_client, keeping one client per root itself.
--
-- Run lenses: `▶ Run all` / `▶ Run` lenses and the results of runs are shown as code lenses, kept
-- fresh as results arrive. Commands: :EvalspecRun (the prompt or test under the cursor, or the whole
-- file when the cursor is above the first one), :EvalspecRunAll, :EvalspecPlan, :EvalspecCancel and
-- :EvalspecResults. Run settings (models, judges, output, maxCost, maxWaitSeconds, batchModels…) go in
-- init_options.run, e.g.
--   init_options = { run = { models = { "echo" }, maxCost = 5 } }

local M = {}

local defaults = {
  name = "evalspec",
  cmd = { "evalspec-lsp" },
  filetypes = { "yaml", "json" },
  -- The first of these found walking up from the file marks the workspace root.
  root_markers = { ".git", "pyproject.toml", "package.json", ".agentv", "blueprints" },
  init_options = { debounceMs = 75 },
  -- Show code lenses (run lenses and results); refreshed on these events and as runs progress.
  codelens = true,
  codelens_events = { "BufEnter", "InsertLeave", "CursorHold" },
  -- Set 'omnifunc' to the LSP client's, so <C-x><C-o> completes (a completion plugin may replace it).
  omnifunc = true,
  -- :EvalspecResults: "auto" opens the HTML report in the browser when there is a display (the system
  -- opener: open / xdg-open), else shows the report as Markdown in a split; "browser" | "split".
  results = "auto",
  capabilities = nil,
  on_attach = nil,
  -- Neovim batches buffer changes before sending them; the server debounces again.
  debounce_text_changes = 80,
}

M.config = nil
local clients_by_root = {} -- Neovim 0.7 only: root -> client id

local uv = vim.loop

local function exists(path)
  return uv.fs_stat(path) ~= nil
end

local function parent(dir)
  local up = vim.fn.fnamemodify(dir, ":h")
  if up == dir then
    return nil
  end
  return up
end

--- The nearest folder above `file` that holds one of `markers`, or the file's own folder.
function M.find_root(file, markers)
  local start = vim.fn.fnamemodify(file, ":p:h")
  local dir = start
  while dir do
    for _, marker in ipairs(markers) do
      if exists(dir .. "/" .. marker) then
        return dir
      end
    end
    dir = parent(dir)
  end
  return start
end

local function refresh_lenses(bufnr)
  if M.config and M.config.codelens and vim.api.nvim_get_current_buf() == bufnr then
    pcall(vim.lsp.codelens.refresh)
  end
end

-- Lenses asked for by a request of our own: `vim.lsp.codelens.refresh` does nothing while one of its
-- requests is out, and that one may have been answered from the run's state before the change we were
-- told about (a run that finished kept showing "Cancel run (0/1 done)" until the next edit). Neovim
-- handles answers in the order they come, and the server answers this one after the notification.
local function fetch_lenses(bufnr)
  if not (M.config and M.config.codelens) or not vim.api.nvim_buf_is_loaded(bufnr) then
    return
  end
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) } }
  pcall(vim.lsp.buf_request, bufnr, "textDocument/codeLens", params, function(err, result, ctx, config)
    if err == nil then -- "still checking": the next notification or event asks again
      vim.lsp.codelens.on_codelens(err, result, ctx, config)
    end
  end)
end

-- The server tells us when a document's run changes; lenses are fetched again for it.
local function on_run_state(_, result)
  if result and result.uri then
    local bufnr = vim.uri_to_bufnr(result.uri)
    vim.schedule(function()
      fetch_lenses(bufnr)
    end)
  end
end

-- window/showMessage with every line shown: Neovim's own handler writes the message in one go and only
-- its last line stays on screen (:EvalspecPlan showed "estimated cost …" alone). Each line is echoed,
-- kept in :messages; several lines make the usual "Press ENTER" prompt.
local levels = { [1] = "ErrorMsg", [2] = "WarningMsg" }
local function on_show_message(_, result, ctx)
  if not (result and result.message) then
    return
  end
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local name = client and client.name or "evalspec"
  local chunks = {}
  local lines = vim.split(result.message, "\n", { plain = true })
  for i, line in ipairs(lines) do
    table.insert(chunks, { (i == 1 and ("LSP[" .. name .. "] ") or "") .. line .. (i < #lines and "\n" or ""),
      levels[result.type] or "Normal" })
  end
  vim.schedule(function()
    vim.api.nvim_echo(chunks, true, {})
  end)
  return vim.NIL
end

local function on_attach(config)
  return function(client, bufnr)
    if config.omnifunc and (vim.bo[bufnr].omnifunc == "" or vim.bo[bufnr].omnifunc == "syntaxcomplete#Complete") then
      vim.bo[bufnr].omnifunc = "v:lua.vim.lsp.omnifunc"
    end
    if config.codelens then
      vim.api.nvim_create_autocmd(config.codelens_events, {
        group = vim.api.nvim_create_augroup("evalspec_lenses_" .. bufnr, { clear = true }),
        buffer = bufnr,
        callback = function()
          refresh_lenses(bufnr)
        end,
      })
      refresh_lenses(bufnr)
    end
    if config.on_attach then
      config.on_attach(client, bufnr)
    end
  end
end

local function client_config(config, root)
  return {
    name = config.name,
    cmd = config.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    init_options = config.init_options,
    capabilities = config.capabilities or vim.lsp.protocol.make_client_capabilities(),
    on_attach = on_attach(config),
    handlers = { ["evalspec/runState"] = on_run_state, ["evalspec/runFinished"] = on_run_state,
      ["window/showMessage"] = on_show_message },
    flags = { debounce_text_changes = config.debounce_text_changes },
  }
end

local function client_of(bufnr)
  local clients = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr }) or vim.lsp.buf_get_clients(bufnr)
  for _, client in pairs(clients) do
    if client.name == (M.config and M.config.name or "evalspec") then
      return client
    end
  end
  return nil
end

--- Ask the server to run `command` ("evalspec.run", "evalspec.plan", …) for the buffer, optionally
--- for one prompt / test: its id, or { line = n } for the one written around 0-based line n.
function M.execute(command, item, bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local client = client_of(bufnr)
  if client == nil then
    vim.notify("evalspec: no evalspec language server on this buffer", vim.log.levels.WARN)
    return
  end
  local args = { uri = vim.uri_from_bufnr(bufnr) }
  if type(item) == "table" then
    args.line = item.line
  elseif item then
    args.item = item
  end
  client.request("workspace/executeCommand", { command = command, arguments = { args } }, function(err, result)
    if err then
      vim.notify("evalspec: " .. tostring(err.message or err), vim.log.levels.ERROR)
    elseif result and result.ok == false and result.error then
      vim.notify("evalspec: " .. result.error, vim.log.levels.WARN)
    end
    refresh_lenses(bufnr)
  end, bufnr)
end

local function opener()
  if vim.fn.has("mac") == 1 and vim.fn.executable("open") == 1 then
    return { "open" }
  end
  if vim.fn.has("win32") == 1 then
    return { "cmd.exe", "/c", "start", "" }
  end
  local display = (os.getenv("DISPLAY") or "") ~= "" or (os.getenv("WAYLAND_DISPLAY") or "") ~= ""
  if display and vim.fn.executable("xdg-open") == 1 then
    return { "xdg-open" }
  end
  return nil
end

local function show_markdown(text, name)
  vim.cmd("botright split")
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_win_set_buf(0, buf)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text, "\n", { plain = true }))
  vim.bo[buf].filetype = "markdown"
  vim.bo[buf].modifiable = false
  pcall(vim.api.nvim_buf_set_name, buf, name)
end

--- :EvalspecResults: the last run's HTML report in the browser, or its Markdown in a split when there
--- is no display (or `results = "split"`), or the results file itself when no report could be made.
function M.show_results(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local client = client_of(bufnr)
  if client == nil then
    vim.notify("evalspec: no evalspec language server on this buffer", vim.log.levels.WARN)
    return
  end
  local how = M.config and M.config.results or "auto"
  local open = how ~= "split" and opener() or nil
  local args = { uri = vim.uri_from_bufnr(bufnr), open = false, markdown = open == nil }
  client.request("workspace/executeCommand", { command = "evalspec.showResults", arguments = { args } },
    function(err, result)
      if err then
        vim.notify("evalspec: " .. tostring(err.message or err), vim.log.levels.ERROR)
      elseif not result or result.ok == false then
        vim.notify("evalspec: " .. (result and result.error or "no results"), vim.log.levels.WARN)
      elseif open and result.report then
        local cmd = vim.list_extend(vim.deepcopy(open), { result.report })
        vim.fn.jobstart(cmd, { detach = true })
        vim.notify("evalspec: report opened in the browser: " .. result.report)
      elseif result.markdown then
        show_markdown(result.markdown, "evalspec://report/" .. vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ":t"))
      elseif result.file then
        vim.cmd("botright split " .. vim.fn.fnameescape(result.file))
      end
      M.last_results = result
    end, bufnr)
end

--- :EvalspecExplain: the page of the finding under the cursor (why it matters, an example, the fix), from
--- the link its diagnostic carries (codeDescription.href): a local page opens in a split, a docs site's
--- page in the browser (or its address is shown when there is no display).
function M.explain(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local cursor = vim.api.nvim_win_get_cursor(0)
  local line, col = cursor[1] - 1, cursor[2]
  local href
  for _, d in ipairs(vim.diagnostic.get(bufnr, { lnum = line })) do
    local data = d.user_data and d.user_data.lsp or {}
    local link = data.codeDescription and data.codeDescription.href
    if link and (href == nil or (d.col <= col and col <= (d.end_col or d.col))) then
      href = link
    end
  end
  if href == nil then
    vim.notify("evalspec: no finding with a page on this line", vim.log.levels.WARN)
    return nil
  end
  if href:match("^file://") then
    vim.cmd("botright split " .. vim.fn.fnameescape(vim.uri_to_fname(href)))
    vim.bo.readonly = true
  else
    local open = opener()
    if open then
      vim.fn.jobstart(vim.list_extend(vim.deepcopy(open), { href }), { detach = true })
    end
    vim.notify("evalspec: " .. href)
  end
  return href
end

--- The id of the prompt / test whose run lens is nearest at or above the cursor (nil: the suite).
function M.item_at_cursor(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local line = vim.api.nvim_win_get_cursor(0)[1] - 1
  local best, best_line = nil, -1
  for _, lens in ipairs(vim.lsp.codelens.get(bufnr) or {}) do
    local cmd = lens.command
    local start = lens.range.start.line
    if cmd and cmd.command == "evalspec.run" and start <= line and start > best_line then
      local arg = cmd.arguments and cmd.arguments[1] or {}
      best, best_line = arg.item, start
    end
  end
  return best
end

local function is_running(id)
  local client = id and vim.lsp.get_client_by_id(id)
  return client ~= nil and not client.is_stopped()
end

--- Attach evalspec-lsp to buffer `bufnr` (a real file of one of the configured filetypes).
function M.attach(bufnr)
  local config = M.config
  if config == nil then
    return nil
  end
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or vim.bo[bufnr].buftype ~= "" then
    return nil -- scratch buffers, help, terminals…
  end
  local root = M.find_root(name, config.root_markers)
  if vim.lsp.start then -- Neovim 0.8+
    return vim.lsp.start(client_config(config, root), { bufnr = bufnr })
  end
  local id = clients_by_root[root]
  if not is_running(id) then
    id = vim.lsp.start_client(client_config(config, root))
    clients_by_root[root] = id
  end
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return id
end

function M.setup(opts)
  opts = opts or {}
  local config = vim.tbl_deep_extend("force", {}, defaults, opts)
  -- Lists are replaced, not merged index by index.
  for _, key in ipairs({ "cmd", "filetypes", "root_markers" }) do
    if opts[key] ~= nil then
      config[key] = opts[key]
    end
  end
  M.config = config
  -- The results lens runs here, not on the server: the report opens in the browser or a split.
  vim.lsp.commands["evalspec.showResults"] = function(_, ctx)
    M.show_results(ctx and ctx.bufnr or 0)
  end

  -- { name, server command, description, for the item under the cursor? }
  for _, c in ipairs({
    { "EvalspecRun", "evalspec.run", "run the prompt or test under the cursor", true },
    { "EvalspecRunAll", "evalspec.run", "run the whole file" },
    { "EvalspecPlan", "evalspec.plan", "what a run would do" },
    { "EvalspecCancel", "evalspec.cancelRun", "stop this file's run" },
    { "EvalspecResults", "evalspec.showResults", "the last run's report (browser, or Markdown in a split)" },
    { "EvalspecExplain", "explain", "the page of the finding under the cursor: why, an example, the fix" },
  }) do
    vim.api.nvim_create_user_command(c[1], function()
      if c[2] == "evalspec.showResults" then
        M.show_results()
        return
      elseif c[2] == "explain" then
        M.explain()
        return
      end
      -- The server finds the prompt or test around the cursor in the current text (lenses may be stale).
      M.execute(c[2], c[4] and { line = vim.api.nvim_win_get_cursor(0)[1] - 1 } or nil)
    end, { desc = "evalspec: " .. c[3] })
  end

  local group = vim.api.nvim_create_augroup("evalspec", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = config.filetypes,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  -- Buffers opened before setup() ran.
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.tbl_contains(config.filetypes, vim.bo[buf].filetype) then
      M.attach(buf)
    end
  end
end

return M
