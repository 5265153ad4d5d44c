-- Headless Neovim drives evalspec-lsp through the editors/nvim plugin and the built-in client, then
-- writes what it saw to $EVALSPEC_NVIM_OUT as JSON. A timer ends Neovim whatever happens.
--
--   EVALSPEC_PLUGIN   the editors/nvim folder
--   EVALSPEC_PYTHON   the Python that has evalspec installed (the server runs as `python -m evalspec_lsp`)
--   EVALSPEC_NVIM_FILE  the blueprint to open
--   EVALSPEC_NVIM_OUT   where to write the results
--   EVALSPEC_NVIM_TIMEOUT_MS  the hard limit (default 150000)

vim.opt.runtimepath:prepend(os.getenv("EVALSPEC_PLUGIN"))
vim.opt.swapfile = false
vim.cmd("filetype on")

local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)")
local harness_lib = dofile(here .. "harness.lua")
harness_lib.readme_setup(os.getenv("EVALSPEC_PLUGIN"))  -- the user's init.lua, from the README
local harness = harness_lib.start(150000)
local result, finish, step = harness.result, harness.finish, harness.step
local file = os.getenv("EVALSPEC_NVIM_FILE")
local v = vim.version()
result.nvim = string.format("%d.%d.%d", v.major, v.minor, v.patch)

local function diagnostics(bufnr)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local lsp_data = d.user_data and d.user_data.lsp or {}
    table.insert(out, {
      lnum = d.lnum,
      col = d.col,
      end_col = d.end_col,
      severity = d.severity,
      message = d.message,
      source = d.source,
      code = lsp_data.code or d.code,
    })
  end
  return out
end

local function has_code(bufnr, code)
  for _, d in ipairs(diagnostics(bufnr)) do
    if d.code == code then
      return true
    end
  end
  return false
end

local function run()
  local bufnr
  local ok = step("open", function()
    harness_lib.setup({
      cmd = { os.getenv("EVALSPEC_PYTHON"), "-m", "evalspec_lsp" },
      -- requestBudgetMs: the suite runs on loaded machines (the 0.8 s default is tested in tests/lsp)
      init_options = { debounceMs = 20, runCosts = false, requestBudgetMs = 10000, run = { models = { "echo" }, output = os.getenv("EVALSPEC_NVIM_RESULTS") } },
    })
    vim.cmd("edit " .. vim.fn.fnameescape(file))
    bufnr = vim.api.nvim_get_current_buf()
    result.filetype = vim.bo[bufnr].filetype
    assert(vim.wait(60000, function()
      return #vim.lsp.buf_get_clients(bufnr) > 0
    end, 20), "no language client attached to the buffer")
    result.client = vim.lsp.buf_get_clients(bufnr)[next(vim.lsp.buf_get_clients(bufnr))].name
    result.readme = harness_lib.readme_effects(bufnr)
  end)
  if not ok then
    return
  end

  ok = step("diagnostics on open", function()
    assert(vim.wait(60000, function()
      return has_code(bufnr, "unknown-key")
    end, 20), "no unknown-key diagnostic arrived")
    result.diagnostics_on_open = diagnostics(bufnr)
  end)
  if not ok then
    return
  end

  ok = step("explain", function()
    -- :EvalspecExplain on the `shuld` line opens the unknown-key page its diagnostic links to.
    vim.api.nvim_win_set_cursor(0, { 7, 3 })
    vim.cmd("EvalspecExplain")
    result.explain_page = vim.api.nvim_buf_get_name(0)
    result.explain_lines = vim.api.nvim_buf_get_lines(0, 0, 20, false)
    vim.cmd("close")
    assert(vim.api.nvim_get_current_buf() == bufnr, "the blueprint is not the current buffer after :close")
  end)
  if not ok then
    return
  end

  ok = step("completion", function()
    -- Start a new point under `should:` and ask for completions after `$con`, mid-word.
    local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
    local at
    for i, line in ipairs(lines) do
      if line:match("^  should:") then
        at = i -- 1-based index of `should:` = 0-based index of the line after it
      end
    end
    assert(at, "no should: line in the blueprint")
    vim.api.nvim_buf_set_lines(bufnr, at, at, false, { "    - $con" })
    local params = {
      textDocument = { uri = vim.uri_from_bufnr(bufnr) },
      position = { line = at, character = 10 },
    }
    local responses = vim.lsp.buf_request_sync(bufnr, "textDocument/completion", params, 60000)
    assert(responses, "no answer to textDocument/completion")
    local labels = {}
    for _, response in pairs(responses) do
      assert(not response.err, "completion failed: " .. vim.inspect(response.err))
      local items = response.result and (response.result.items or response.result) or {}
      for _, item in ipairs(items) do
        table.insert(labels, item.label)
      end
    end
    result.completion_labels = labels
  end)
  if not ok then
    return
  end

  step("diagnostics after an edit", function()
    -- Fix the typo in place (an incremental change): its diagnostic must go away.
    local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
    for i, line in ipairs(lines) do
      local s, e = line:find("shuld", 1, true)
      if s then
        vim.api.nvim_buf_set_text(bufnr, i - 1, s - 1, i - 1, e, { "should" })
      end
    end
    assert(vim.wait(60000, function()
      return not has_code(bufnr, "unknown-key")
    end, 20), "the unknown-key diagnostic stayed after the fix")
    result.diagnostics_after_edit = diagnostics(bufnr)
  end)
  if not ok then
    return
  end

  step("run lens", function()
    -- Take the half-typed `$con` point out again: a file with errors is not run.
    local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
    for i, line in ipairs(lines) do
      if line == "    - $con" then
        vim.api.nvim_buf_set_lines(bufnr, i - 1, i, false, {})
        break
      end
    end
    local function lens_titles()
      local titles = {}
      for _, lens in ipairs(vim.lsp.codelens.get(bufnr) or {}) do
        if lens.command then
          table.insert(titles, { line = lens.range.start.line, title = lens.command.title })
        end
      end
      return titles
    end
    local function has_title(pattern)
      for _, t in ipairs(lens_titles()) do
        if t.title:find(pattern) then
          return true
        end
      end
      return false
    end
    assert(vim.wait(60000, function()
      pcall(vim.lsp.codelens.refresh)
      return has_title("^▶ Run all")
    end, 200), "no run lens arrived: " .. vim.inspect(lens_titles()))
    result.lenses_before_run = lens_titles()
    -- Put the cursor inside the greeting prompt and run it, as a user would with :EvalspecRun.
    lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
    for i, line in ipairs(lines) do
      if line:match("prompt: Say hello") then
        vim.api.nvim_win_set_cursor(0, { i, 0 })
      end
    end
    vim.cmd("EvalspecRun")
    assert(vim.wait(60000, function()
      return has_title("✓ 1.00 echo")
    end, 50), "no result lens after the run: " .. vim.inspect(lens_titles()))
    result.lenses_after_run = lens_titles()
  end)
  finish()
end

vim.api.nvim_create_autocmd("VimEnter", { once = true, callback = function()
  vim.schedule(run)
end })
