-- Headless Neovim as a person uses it, in two sessions over the same blueprint and results folder.
--
-- Session "first": accept completions of point functions (<C-x><C-o>, then pick and <C-y>), run the
-- prompt under the cursor (:EvalspecRun) and the whole file (:EvalspecRunAll) against the fake provider,
-- read the failed point's diagnostic on its own line and its hover, then start another run and cancel
-- it (:EvalspecCancel) once the first answer is in.
-- Session "second" (Neovim restarted): open the file and find the results as the first session left
-- them, their diagnostics included, without running anything; :EvalspecPlan; :EvalspecResults.
--
--   EVALSPEC_PLUGIN, EVALSPEC_PYTHON, EVALSPEC_NVIM_FILE, EVALSPEC_NVIM_OUT, EVALSPEC_NVIM_RESULTS,
--   EVALSPEC_NVIM_TIMEOUT_MS as in init.lua; EVALSPEC_NVIM_SESSION: "first" | "second"

vim.opt.runtimepath:prepend(os.getenv("EVALSPEC_PLUGIN"))
vim.opt.swapfile = false
vim.cmd("filetype on")

local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)")
local harness_lib = dofile(here .. "harness.lua")
harness_lib.readme_setup(os.getenv("EVALSPEC_PLUGIN"))  -- the user's init.lua, from the README
local harness = harness_lib.start(270000)
local result, finish, step = harness.result, harness.finish, harness.step
local file = os.getenv("EVALSPEC_NVIM_FILE")
local session = os.getenv("EVALSPEC_NVIM_SESSION")
local bufnr

local function lens_titles()
  local titles = {}
  for _, lens in ipairs(vim.lsp.codelens.get(bufnr) or {}) do
    if lens.command then
      table.insert(titles, { line = lens.range.start.line, title = lens.command.title })
    end
  end
  return titles
end

local function title_at(line, pattern)
  for _, t in ipairs(lens_titles()) do
    if t.line == line and t.title:find(pattern) then
      return t.title
    end
  end
  return nil
end

local function line_of(pattern)
  for i, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    if line:find(pattern) then
      return i - 1
    end
  end
  error("no line matches " .. pattern)
end

local function run_diagnostics()
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.source == "evalspec run" then
      local lsp_data = d.user_data and d.user_data.lsp or {}
      table.insert(out, { lnum = d.lnum, col = d.col, severity = d.severity, message = d.message,
                          code = lsp_data.code or d.code })
    end
  end
  return out
end

-- A wait ends as soon as its condition holds; the bound is only for a machine under heavy load (a
-- shared CI runner saw the run lens take over 20 s).
local function wait_for(what, fn, ms)
  assert(vim.wait(ms or 60000, function()
    pcall(vim.lsp.codelens.refresh)
    return fn()
  end, 100), what .. "; lenses: " .. vim.inspect(lens_titles()))
end

local function keys(text)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(text, true, false, true), "t", false)
end

-- Type `typed` on a new line under `should:`, ask for completions with <C-x><C-o>, pick `want` from the
-- menu and accept it; `done(line)` gets the line as it then reads. Keys are only read once this Lua
-- returns to Neovim's main loop, hence the callbacks.
local function previews()
  local n = 0
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.wo[win].previewwindow then
      n = n + 1
    end
  end
  return n
end

local function complete_and_accept(typed, want, done)
  local at = line_of("^  should:") + 1
  vim.api.nvim_buf_set_lines(bufnr, at, at, false, { typed })
  vim.api.nvim_win_set_cursor(0, { at + 1, #typed })
  vim.defer_fn(function()
    keys("A<C-x><C-o>")
    local tries = 0
    local function poll()
      tries = tries + 1
      local info = vim.fn.complete_info({ "items", "pum_visible" })
      if #info.items == 0 and tries < 100 then
        vim.defer_fn(poll, 50)
        return
      end
      local labels, index = {}, nil
      for i, item in ipairs(info.items) do
        table.insert(labels, item.abbr)
        if item.abbr == want then
          index = i
        end
      end
      if index == nil then
        keys("<Esc>")
        vim.defer_fn(function()
          done(nil, labels)
        end, 100)
        return
      end
      keys(string.rep("<C-n>", index))
      vim.defer_fn(function()
        result.previews_while_choosing = previews()
        keys("<C-y><Esc>")
        vim.defer_fn(function()
          result.previews_after_accept = previews() -- the README's CompleteDone autocommand closed it
          local line = vim.api.nvim_buf_get_lines(bufnr, at, at + 1, false)[1]
          vim.api.nvim_buf_set_lines(bufnr, at, at + 1, false, {}) -- take the half-written point out again
          done(line, labels)
        end, 300)
      end, 300)
    end
    vim.defer_fn(poll, 50)
  end, 300)
end

local function open()
  return step("open", function()
    harness_lib.setup({
      cmd = { os.getenv("EVALSPEC_PYTHON"), "-m", "evalspec_lsp" },
      init_options = { debounceMs = 20, runCosts = false, run = { output = os.getenv("EVALSPEC_NVIM_RESULTS"), cache = false,
                                                 concurrency = 1 } },
    })
    vim.cmd("edit " .. vim.fn.fnameescape(file))
    bufnr = vim.api.nvim_get_current_buf()
    assert(vim.wait(60000, function()
      return #vim.lsp.buf_get_clients(bufnr) > 0
    end, 20), "no language client attached to the buffer")
    result.omnifunc = vim.bo[bufnr].omnifunc
    result.readme = harness_lib.readme_effects(bufnr)
    wait_for("no run lens arrived", function()
      return title_at(0, "^▶ Run all") ~= nil
    end)
  end)
end

local function first_runs()
  local greet, count = line_of("^%- id: greet"), line_of("^%- id: count")
  if not step("run the prompt under the cursor", function()
    vim.api.nvim_win_set_cursor(0, { line_of("prompt: Say hello") + 1, 4 })
    vim.cmd("EvalspecRun")
    wait_for("no result lens on greet", function()
      return title_at(greet, "^✓") ~= nil and title_at(0, "^▶ Run all") ~= nil -- and the run is over
    end)
    result.after_one = lens_titles()
  end) then
    return
  end
  if not step("run the whole file", function()
    vim.cmd("EvalspecRunAll")
    wait_for("no result lens on count", function()
      return title_at(count, "^✗") ~= nil and title_at(0, "^last run") ~= nil
    end)
    result.after_all = lens_titles()
  end) then
    return
  end
  if not step("failures on their lines", function()
    wait_for("no run diagnostics", function()
      return #run_diagnostics() > 0
    end)
    result.run_diagnostics = run_diagnostics()
    result.four_line = line_of("%$contains: four")
    local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) },
                     position = { line = result.four_line, character = 8 } }
    local responses = vim.lsp.buf_request_sync(bufnr, "textDocument/hover", params, 60000)
    for _, r in pairs(responses or {}) do
      result.point_hover = r.result and r.result.contents and r.result.contents.value
    end
  end) then
    return
  end
  if not step("cancel a run", function()
    vim.cmd("EvalspecRunAll")
    wait_for("the run did not start, or greet's answer never came", function()
      return title_at(0, "^■ Cancel run") ~= nil and title_at(greet, "^✓") ~= nil
    end)
    vim.cmd("EvalspecCancel")
    wait_for("the run did not stop", function()
      return title_at(0, "^▶ Run all") ~= nil and title_at(count, "cancelled") ~= nil
    end)
    result.after_cancel = lens_titles()
    vim.wait(1000, function() return false end, 100) -- (diagnostics follow the lenses)
    result.diagnostics_after_cancel = run_diagnostics()
  end) then
    return
  end
  finish()
end

local function first()
  if not open() then
    return
  end
  table.insert(result.steps, "complete")
  complete_and_accept("    - $", "$contains", function(line, labels)
    result.accepted_after_dollar = line
    result.labels_after_dollar = #labels
    complete_and_accept("    - $wor", "$word_count_between", function(line2, labels2)
      result.accepted_after_wor = line2
      result.labels_after_wor = labels2
      vim.schedule(first_runs)
    end)
  end)
end

local function second()
  if not open() then
    return
  end
  step("results are back", function()
    local count = line_of("^%- id: count")
    wait_for("no earlier results on count", function()
      return title_at(count, "ago") ~= nil or title_at(count, "just now") ~= nil
    end)
    wait_for("no summary lens", function()
      return title_at(0, "ago") ~= nil or title_at(0, "just now") ~= nil
    end)
    vim.wait(1000, function() return false end, 100) -- (diagnostics follow the lenses)
    result.restored = lens_titles()
    result.run_diagnostics = run_diagnostics()
  end)
  step("plan", function()
    -- :EvalspecPlan's message has many lines: all of them are shown (and kept in :messages).
    vim.cmd("messages clear")
    vim.cmd("EvalspecPlan")
    assert(vim.wait(30000, function()
      return vim.fn.execute("messages"):find("total: ", 1, true) ~= nil
    end, 100), "no plan message")
    result.plan_messages = vim.split(vim.fn.execute("messages"), "\n", { plain = true })
  end)
  step("show results", function()
    -- No display here: the report comes as Markdown in a split.
    vim.cmd("EvalspecResults")
    local shown
    assert(vim.wait(30000, function()
      for _, win in ipairs(vim.api.nvim_list_wins()) do
        local buf = vim.api.nvim_win_get_buf(win)
        if vim.bo[buf].filetype == "markdown" then
          shown = buf
          return true
        end
      end
      return false
    end, 100), "no report split opened")
    result.report_lines = vim.api.nvim_buf_get_lines(shown, 0, -1, false)
    result.report_name = vim.api.nvim_buf_get_name(shown)
  end)
  finish()
end

vim.api.nvim_create_autocmd("VimEnter", { once = true, callback = function()
  vim.schedule(session == "second" and second or first)
end })
