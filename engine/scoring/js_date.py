"""JavaScript's `new Date(text)` and `new Date(year, month, day)` as bun runs them, in UTC.

AgentV runs on bun, and bun turns on JavaScriptCore's `useV8DateParser` option: `new Date(text)` reads the
text with V8's date parser (V8's src/date/dateparser*, which WebKit carries as
Source/JavaScriptCore/runtime/JSDateMath-v8.cpp), not JavaScriptCore's own `parseES5Date`/`parseDate`.
That parser tries the ES5 ISO form first (`2025-01-15`, `+002025-01-15`, `2025-01-15T24:00:00Z`), then
reads the rest with V8's legacy rules: month names by their first three letters, `MM/DD/YYYY`, time zone
names and `+hhmm` offsets, a missing year read as 2001, days up to 31 in any month (`2025-02-30` is
March 2). This module follows that code step by step; the vectors of ../shared/vectors/agentv were made
with `TZ=UTC`, so local time is UTC here.

A date is its time value: milliseconds since 1970-01-01 UTC (an int), or None where JavaScript's is NaN
(an invalid date).
"""

from __future__ import annotations

from dataclasses import dataclass

_NONE = 0x7FFFFFFF  # V8's kNone: a field not given
_MAX_SIGNIFICANT_DIGITS = 9
_SMI_MAX = 2**31 - 1
_MS_PER_DAY = 86_400_000
_MAX_TIME_MS = 8_640_000_000_000_000  # ES time range: ±100,000,000 days
_MAX_TIME_BEFORE_UTC_MS = _MAX_TIME_MS + 30 * _MS_PER_DAY

# Token tags (V8's DateToken); keywords carry their type (0 and up) as their tag.
_INVALID, _UNKNOWN, _WHITESPACE, _NUMBER, _SYMBOL, _END = -6, -5, -4, -3, -2, -1
_KW_INVALID, _MONTH_NAME, _TIME_ZONE_NAME, _TIME_SEPARATOR, _AM_PM = 0, 1, 2, 3, 4

# V8's keyword table: (first three letters zero-padded, type, value), looked up in this order.
_KEYWORDS: tuple[tuple[bytes, int, int], ...] = (
    *((name.encode(), _MONTH_NAME, i + 1) for i, name in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))),
    (b"am\0", _AM_PM, 0), (b"pm\0", _AM_PM, 12),
    (b"ut\0", _TIME_ZONE_NAME, 0), (b"utc", _TIME_ZONE_NAME, 0), (b"z\0\0", _TIME_ZONE_NAME, 0),
    (b"gmt", _TIME_ZONE_NAME, 0), (b"cdt", _TIME_ZONE_NAME, -5), (b"cst", _TIME_ZONE_NAME, -6),
    (b"edt", _TIME_ZONE_NAME, -4), (b"est", _TIME_ZONE_NAME, -5), (b"mdt", _TIME_ZONE_NAME, -6),
    (b"mst", _TIME_ZONE_NAME, -7), (b"pdt", _TIME_ZONE_NAME, -7), (b"pst", _TIME_ZONE_NAME, -8),
    (b"t\0\0", _TIME_SEPARATOR, 0),
)

_WHITESPACE_BYTES = frozenset(b" \t\n\r\f")  # WTF's isASCIIWhitespace (no \v)


def _between(x: int, lo: int, hi: int) -> bool:
    return lo <= x <= hi


@dataclass(frozen=True, slots=True)
class _Token:
    tag: int
    length: int
    value: int

    def is_number(self) -> bool:
        return self.tag == _NUMBER

    def is_fixed_number(self, length: int) -> bool:
        return self.tag == _NUMBER and self.length == length

    def is_symbol(self, symbol: str) -> bool:
        return self.tag == _SYMBOL and self.value == ord(symbol)

    def is_sign(self) -> bool:
        return self.tag == _SYMBOL and self.value in (0x2B, 0x2D)

    def sign(self) -> int:
        return 44 - self.value  # '+' → 1, '-' → -1

    def is_keyword(self) -> bool:
        return self.tag >= 0

    def is_keyword_z(self) -> bool:
        return self.tag == _TIME_ZONE_NAME and self.length == 1 and self.value == 0


_END_TOKEN = _Token(_END, 0, -1)
_INVALID_TOKEN = _Token(_INVALID, 0, -1)


class _Scanner:
    """V8's InputReader and DateStringTokenizer over the text's UTF-8 bytes (bun hands V8 UTF-8; a byte
    past ASCII counts as a letter, and a NUL ends the text)."""

    def __init__(self, data: bytes) -> None:
        self.data, self.index, self.ch = data, 0, 0
        self._advance()
        self.next_token = self._scan()

    def _advance(self) -> None:
        self.ch = self.data[self.index] if self.index < len(self.data) else 0
        self.index += 1

    def _is_digit(self) -> bool:
        return 0x30 <= self.ch <= 0x39

    def _scan(self) -> _Token:
        start = self.index
        if self.ch == 0:
            return _END_TOKEN
        if self._is_digit():
            n = digits = 0
            while self.ch == 0x30:  # leading zeros count in the length only
                self._advance()
            while self._is_digit():
                if digits < _MAX_SIGNIFICANT_DIGITS:
                    n = n * 10 + self.ch - 0x30
                digits += 1
                self._advance()
            return _Token(_NUMBER, self.index - start, n)
        if self.ch in b":-+.)":
            symbol = self.ch
            self._advance()
            return _Token(_SYMBOL, 1, symbol)
        if self.ch >= 0x41 and self.ch not in _WHITESPACE_BYTES:
            prefix = bytearray(3)
            length = 0
            while self.ch >= 0x41 and self.ch not in _WHITESPACE_BYTES:
                if length < 3:
                    prefix[length] = (self.ch | 0x20) & 0xFF if self.ch < 0x80 else 0xFF
                length += 1
                self._advance()
            return self._keyword(bytes(prefix), length)
        if self.ch in _WHITESPACE_BYTES:
            self._advance()
            return _Token(_WHITESPACE, self.index - start, -1)
        if self.ch == 0x28:  # '(' … ')' nested, skipped as one unknown token
            balance = 0
            while True:
                if self.ch == 0x29:
                    balance -= 1
                elif self.ch == 0x28:
                    balance += 1
                self._advance()
                if not (balance > 0 and self.ch):
                    break
            return _Token(_UNKNOWN, 1, -1)
        self._advance()
        return _Token(_UNKNOWN, 1, -1)

    @staticmethod
    def _keyword(prefix: bytes, length: int) -> _Token:
        for name, kind, value in _KEYWORDS:
            # a word longer than its keyword matches only a month name ("January", "Sept")
            if prefix == name and (length <= 3 or kind == _MONTH_NAME):
                return _Token(kind, length, value)
        return _Token(_KW_INVALID, length, 0)

    def next(self) -> _Token:
        token, self.next_token = self.next_token, self._scan()
        return token

    def peek(self) -> _Token:
        return self.next_token

    def skip_symbol(self, symbol: str) -> bool:
        if self.next_token.is_symbol(symbol):
            self.next_token = self._scan()
            return True
        return False


class _Day:
    def __init__(self) -> None:
        self.comp: list[int] = []
        self.named_month = _NONE
        self.iso = False

    def add(self, n: int) -> bool:
        if len(self.comp) < 3:
            self.comp.append(n)
            return True
        return False

    def write(self) -> tuple[int, int, int] | None:
        if not self.comp:
            return None
        comp = self.comp + [1] * (3 - len(self.comp))  # month and day default to 1
        year = 0  # (=> 2000)
        if self.named_month == _NONE:
            # V8 tests `index_ == 3` after filling the defaults in, so that test always holds
            if self.iso or not _between(comp[0], 1, 31):
                year, month, day = comp
            else:
                month, day, year = comp
        else:
            month = self.named_month
            if not _between(comp[0], 1, 31):
                year, day = comp[0], comp[1]
            else:
                day, year = comp[0], comp[1]
        if not self.iso:
            if _between(year, 0, 49):
                year += 2000
            elif _between(year, 50, 99):
                year += 1900
        if not (_between(month, 1, 12) and _between(day, 1, 31)):
            return None
        return year, month - 1, day


class _Time:
    def __init__(self) -> None:
        self.comp: list[int] = []
        self.hour_offset = _NONE

    def empty(self) -> bool:
        return not self.comp

    def expecting(self, n: int) -> bool:
        i = len(self.comp)
        return (i == 1 and _between(n, 0, 59)) or (i == 2 and _between(n, 0, 59)) or (i == 3 and _between(n, 0, 999))

    def add(self, n: int) -> bool:
        if len(self.comp) < 4:
            self.comp.append(n)
            return True
        return False

    def add_final(self, n: int) -> bool:
        if not self.add(n):
            return False
        self.comp += [0] * (4 - len(self.comp))
        return True

    def write(self) -> tuple[int, int, int, int] | None:
        hour, minute, second, ms = self.comp + [0] * (4 - len(self.comp))
        if self.hour_offset != _NONE:
            if not _between(hour, 0, 12):
                return None
            hour = hour % 12 + self.hour_offset
        if not (_between(hour, 0, 23) and _between(minute, 0, 59) and _between(second, 0, 59)
                and _between(ms, 0, 999)) and (hour != 24 or minute or second or ms):
            return None
        return hour, minute, second, ms


class _Zone:
    def __init__(self) -> None:
        self.sign = self.hour = self.minute = _NONE

    def set(self, hours: int) -> None:
        self.sign = -1 if hours < 0 else 1
        self.hour, self.minute = abs(hours), 0

    def set_sign(self, sign: int) -> None:
        self.sign = -1 if sign < 0 else 1

    def expecting(self, n: int) -> bool:
        return self.hour != _NONE and self.minute == _NONE and _between(n, 0, 59)

    def is_utc(self) -> bool:
        return self.hour == 0 and self.minute == 0

    def empty(self) -> bool:
        return self.hour == _NONE

    def write(self) -> tuple[bool, int | None]:
        """(valid, offset in seconds or None for local time)."""
        if self.sign == _NONE:
            return True, None
        hour = 0 if self.hour == _NONE else self.hour
        minute = 0 if self.minute == _NONE else self.minute
        total = (hour * 3600 + minute * 60) & 0xFFFFFFFF  # unsigned 32-bit arithmetic, as V8's
        if total > _SMI_MAX:
            return False, None
        return True, -total if self.sign < 0 else total


def _milliseconds(token: _Token) -> int:
    """V8's ReadMilliseconds: the first three significant digits, from the value and its length."""
    number, length = token.value, token.length
    if length == 1:
        return number * 100
    if length == 2:
        return number * 10
    length = min(length, _MAX_SIGNIFICANT_DIGITS)
    return number // 10 ** (length - 3) if length > 3 else number


def _es5(scanner: _Scanner, day: _Day, time: _Time, zone: _Zone) -> _Token:
    """V8's ParseES5DateTime: as far as the text is an ES5 date-time string. Returns the token the legacy
    parser continues with, the end token (done) or the invalid token (NaN)."""
    peek = scanner.peek()
    if peek.is_sign():
        sign_token = scanner.next()
        if not scanner.peek().is_fixed_number(6):
            return sign_token
        year = scanner.next().value
        if sign_token.sign() < 0 and year == 0:
            return sign_token
        day.add(sign_token.sign() * year)
    elif peek.is_fixed_number(4):
        day.add(scanner.next().value)
    else:
        return scanner.next()
    if scanner.skip_symbol("-"):
        peek = scanner.peek()
        if not (peek.is_fixed_number(2) and _between(peek.value, 1, 12)):
            return scanner.next()
        day.add(scanner.next().value)
        if scanner.skip_symbol("-"):
            peek = scanner.peek()
            if not (peek.is_fixed_number(2) and _between(peek.value, 1, 31)):
                return scanner.next()
            day.add(scanner.next().value)
    if scanner.peek().tag != _TIME_SEPARATOR:
        if scanner.peek().tag != _END:
            return scanner.next()
    else:
        scanner.next()
        peek = scanner.peek()
        if not (peek.is_fixed_number(2) and _between(peek.value, 0, 24)):
            return _INVALID_TOKEN
        hour_is_24 = peek.value == 24
        time.add(scanner.next().value)
        if not scanner.skip_symbol(":"):
            return _INVALID_TOKEN
        peek = scanner.peek()
        if not (peek.is_fixed_number(2) and _between(peek.value, 0, 59)) or (hour_is_24 and peek.value > 0):
            return _INVALID_TOKEN
        time.add(scanner.next().value)
        if scanner.skip_symbol(":"):
            peek = scanner.peek()
            if not (peek.is_fixed_number(2) and _between(peek.value, 0, 59)) or (hour_is_24 and peek.value > 0):
                return _INVALID_TOKEN
            time.add(scanner.next().value)
            if scanner.skip_symbol("."):
                peek = scanner.peek()
                if not peek.is_number() or (hour_is_24 and peek.value > 0):
                    return _INVALID_TOKEN
                time.add(_milliseconds(scanner.next()))
        peek = scanner.peek()
        if peek.is_keyword_z():
            scanner.next()
            zone.set(0)
        elif peek.is_sign():
            zone.set_sign(scanner.next().sign())
            if scanner.peek().is_fixed_number(4):  # hhmm
                hour, minute = divmod(scanner.next().value, 100)
                if not (_between(hour, 0, 23) and _between(minute, 0, 59)):
                    return _INVALID_TOKEN
                zone.hour, zone.minute = hour, minute
            else:  # hh:mm
                peek = scanner.peek()
                if not (peek.is_fixed_number(2) and _between(peek.value, 0, 23)):
                    return _INVALID_TOKEN
                zone.hour = scanner.next().value
                if not scanner.skip_symbol(":"):
                    return _INVALID_TOKEN
                peek = scanner.peek()
                if not (peek.is_fixed_number(2) and _between(peek.value, 0, 59)):
                    return _INVALID_TOKEN
                zone.minute = scanner.next().value
        if scanner.peek().tag != _END:
            return _INVALID_TOKEN
    # A date-only form without an offset is UTC; a date-time form is local time.
    if zone.empty() and time.empty():
        zone.set(0)
    day.iso = True
    return _END_TOKEN


def _fields(data: bytes) -> tuple[int, int, int, int, int, int, int, int | None] | None:
    """V8's DateParser::Parse: (year, month 0-11, day, hour, minute, second, ms, UTC offset in seconds or
    None for local time), or None."""
    scanner = _Scanner(data)
    zone, time, day = _Zone(), _Time(), _Day()
    token = _es5(scanner, day, time, zone)
    if token.tag == _INVALID:
        return None
    has_read_number = bool(day.comp)
    while token.tag != _END:
        if token.is_number():
            has_read_number = True
            n = token.value
            if scanner.skip_symbol(":"):
                if scanner.skip_symbol(":"):  # n::
                    if not time.empty():
                        return None
                    time.add(n)
                    time.add(0)
                else:  # n:
                    if not time.add(n):
                        return None
                    if scanner.peek().is_symbol("."):
                        scanner.next()
            elif scanner.skip_symbol(".") and time.expecting(n):
                time.add(n)
                if not scanner.peek().is_number():
                    return None
                time.add_final(_milliseconds(scanner.next()))
            elif zone.expecting(n):
                zone.minute = n
            elif time.expecting(n):
                time.add_final(n)
                # the time must end here: end, white space, "Z", "+" or "-"
                peek = scanner.peek()
                if not (peek.tag in (_END, _WHITESPACE) or peek.is_keyword_z() or peek.is_sign()):
                    return None
            else:
                if not day.add(n):
                    return None
                scanner.skip_symbol("-")
        elif token.is_keyword():
            if token.tag == _AM_PM and not time.empty():
                time.hour_offset = token.value
            elif token.tag == _MONTH_NAME:
                day.named_month = token.value
                scanner.skip_symbol("-")
            elif token.tag == _TIME_ZONE_NAME and has_read_number:
                zone.set(token.value)
            else:
                # a word that means nothing is allowed only before the first number, apart from it
                if has_read_number or scanner.peek().is_number():
                    return None
        elif token.is_sign() and (zone.is_utc() or not time.empty()):
            zone.set_sign(token.sign())  # a UTC offset, after UTC or a time
            n = length = 0
            if scanner.peek().is_number():
                number = scanner.next()
                n, length = number.value, number.length
            has_read_number = True
            if scanner.peek().is_symbol(":"):
                zone.hour, zone.minute = n, _NONE
            elif length in (1, 2):
                zone.hour, zone.minute = n, 0
            elif length in (3, 4):
                zone.hour, zone.minute = divmod(n, 100)
            else:
                return None
        elif (token.is_sign() or token.is_symbol(")")) and has_read_number:
            return None
        token = scanner.next()
    ymd = day.write()
    hms = time.write()
    if ymd is None or hms is None:
        return None
    valid, offset = zone.write()
    if not valid:
        return None
    return (*ymd, *hms, offset)


def days_from_civil(year: int, month0: int) -> int:
    """Days from 1970-01-01 to the first of month `month0` (0-based, any integer) of `year`."""
    year += month0 // 12
    month0 %= 12
    y = year - 1 if month0 < 2 else year  # years counted from March
    era = y // 400
    yoe = y - era * 400
    mp = (month0 + 10) % 12
    doy = (153 * mp + 2) // 5
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _time_clip(ms: int) -> int | None:
    return ms if -_MAX_TIME_MS <= ms <= _MAX_TIME_MS else None


def parse(text: str) -> int | None:
    """`new Date(text).getTime()` in bun with TZ=UTC; None for NaN."""
    text = text.replace("\u202f", " ")  # JavaScriptCore reads a narrow no-break space as a space
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: the UTF-8 conversion fails, NaN
        return None
    fields = _fields(data.split(b"\0", 1)[0])
    if fields is None:
        return None
    year, month0, day, hour, minute, second, ms, offset = fields
    if not (-1_000_000 <= year <= 1_000_000):  # V8's MakeDay range
        return None
    value = (days_from_civil(year, month0) + day - 1) * _MS_PER_DAY + ((hour * 60 + minute) * 60 + second) * 1000 + ms
    if offset is None:  # local time, which is UTC here
        if abs(value) > _MAX_TIME_BEFORE_UTC_MS:
            return None
    else:
        value -= offset * 1000
    return _time_clip(value)


def make_date(year: int, month0: int, day: int) -> int | None:
    """`new Date(year, month0, day).getTime()` (local time = UTC): a year from 0 to 99 is 1900 + year, and
    months and days past their ends roll over."""
    if 0 <= year <= 99:
        year += 1900
    return _time_clip((days_from_civil(year, month0) + day - 1) * _MS_PER_DAY)


def ymd(ms: int) -> tuple[int, int, int]:
    """(getUTCFullYear, getUTCMonth() + 1, getUTCDate) of a time value."""
    days = ms // _MS_PER_DAY
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (1 if month <= 2 else 0)
    return year, month, day


def iso_date(ms: int) -> str:
    """`date.toISOString().split('T')[0]`: YYYY-MM-DD, or ±YYYYYY-MM-DD outside years 0–9999."""
    year, month, day = ymd(ms)
    text = f"{year:04d}" if 0 <= year <= 9999 else f"{'-' if year < 0 else '+'}{abs(year):06d}"
    return f"{text}-{month:02d}-{day:02d}"
