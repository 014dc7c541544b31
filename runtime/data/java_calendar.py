"""java.util.GregorianCalendar in UTC, as SimpleDateFormat uses it where the reference runs (locale en_US).

Instants are epoch milliseconds, so years past 9999 or before 1 are fine. The calendar is Java's hybrid:
Julian before 15 October 1582, Gregorian from then on. Weeks start on Sunday and the first week of a year
(or month) is the one holding its first day. `resolve` is GregorianCalendar's lenient computeTime: the most
recently set of the competing date fields wins, and out-of-range values roll over (hour 25 is 01:00 the next
day, month 13 is January of the next year).
"""

from __future__ import annotations

from typing import NamedTuple

(
    ERA,
    YEAR,
    MONTH,
    WEEK_OF_YEAR,
    WEEK_OF_MONTH,
    DAY_OF_MONTH,
    DAY_OF_YEAR,
    DAY_OF_WEEK,
    DAY_OF_WEEK_IN_MONTH,
    AM_PM,
    HOUR,
    HOUR_OF_DAY,
    MINUTE,
    SECOND,
    MILLISECOND,
    ZONE_OFFSET,
    DST_OFFSET,
) = range(17)
SUNDAY = 1
FIRST_DAY_OF_WEEK = SUNDAY
MINIMAL_DAYS_IN_FIRST_WEEK = 1
MILLIS_PER_DAY = 86_400_000
_EPOCH_FIXED = 719_163  # 1970-01-01 as a fixed date (1 = 0001-01-01 Gregorian)
_CUTOVER_FIXED = 577_736  # 1582-10-15, the first Gregorian day
_CUTOVER_YEAR = 1582
_BCE = 0


# ---- fixed dates ------------------------------------------------------------------------------------------


def _is_leap(year: int, gregorian: bool) -> bool:
    if not gregorian:
        return year % 4 == 0
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def fixed_date(year: int, month: int, day: int, gregorian: bool) -> int:
    """Fixed date of a (normalized: 0 = 1 BC) year, month 1..12 and any day of the month."""
    prev = year - 1
    days = day + 365 * prev + (367 * month - 362) // 12
    days += prev // 4 - prev // 100 + prev // 400 if gregorian else prev // 4 - 2
    if month > 2:
        days -= 1 if _is_leap(year, gregorian) else 2
    return days


def _year_month_day(fixed: int, gregorian: bool) -> tuple[int, int, int]:
    if gregorian:
        year = _gregorian_year(fixed)
    else:
        year = (4 * (fixed + 1) + 1464) // 1461
    prior_days = fixed - fixed_date(year, 1, 1, gregorian)
    if fixed >= fixed_date(year, 3, 1, gregorian):
        prior_days += 1 if _is_leap(year, gregorian) else 2
    month = (12 * prior_days + 373) // 367
    return year, month, fixed - fixed_date(year, month, 1, gregorian) + 1


def _gregorian_year(fixed: int) -> int:
    d0 = fixed - 1
    n400, d1 = divmod(d0, 146097)
    n100, d2 = divmod(d1, 36524)
    n4, d3 = divmod(d2, 1461)
    n1 = d3 // 365
    year = 400 * n400 + 100 * n100 + 4 * n4 + n1
    return year if n100 == 4 or n1 == 4 else year + 1


def day_of_week(fixed: int) -> int:
    """1 = Sunday .. 7 = Saturday."""
    return fixed % 7 + 1


def _day_of_week_on_or_before(fixed: int, dow: int) -> int:
    return fixed - (fixed - (dow - 1)) % 7


def _first_week_start(day1: int) -> int:
    start = _day_of_week_on_or_before(day1 + 6, FIRST_DAY_OF_WEEK)
    return start - 7 if start - day1 >= MINIMAL_DAYS_IN_FIRST_WEEK else start


def _week_number(day1: int, fixed: int) -> int:
    return (fixed - _first_week_start(day1)) // 7 + 1


# ---- instant -> fields (computeFields) ------------------------------------------------------------------


class Fields(NamedTuple):
    era_ad: bool
    year: int  # of the era (1 BC = 1)
    month: int  # 1..12
    day: int
    day_of_year: int
    day_of_week: int  # 1 = Sunday
    week_year: int  # not by era: 1 BC is week year 0, as Java prints it
    week_of_year: int
    week_of_month: int
    hour: int
    minute: int
    second: int
    millisecond: int


def fields(millis: int) -> Fields:
    days, time_of_day = divmod(millis, MILLIS_PER_DAY)
    fixed = days + _EPOCH_FIXED
    gregorian = fixed >= _CUTOVER_FIXED
    year, month, day = _year_month_day(fixed, gregorian)
    jan1 = fixed_date(year, 1, 1, gregorian and year != _CUTOVER_YEAR)
    week = _week_number(jan1, fixed)
    week_year = year
    if week >= 52:
        next_jan1 = jan1 + (366 if _is_leap(year, gregorian) else 365)
        next_start = _day_of_week_on_or_before(next_jan1 + 6, FIRST_DAY_OF_WEEK)
        if next_start - next_jan1 >= MINIMAL_DAYS_IN_FIRST_WEEK and fixed >= next_start - 7:
            week, week_year = 1, year + 1
    seconds, ms = divmod(time_of_day, 1000)
    era_ad = year > 0
    return Fields(
        era_ad,
        year if era_ad else 1 - year,
        month,
        day,
        fixed - jan1 + 1,
        day_of_week(fixed),
        week_year,
        week,
        _week_number(fixed - day + 1, fixed),
        seconds // 3600,
        seconds // 60 % 60,
        seconds % 60,
        ms,
    )


# ---- fields -> instant (lenient computeTime) ------------------------------------------------------------


class FieldSet:
    """Calendar fields with the order in which they were set (Calendar's stamps)."""

    def __init__(self) -> None:
        self.values: dict[int, int] = {}
        self.stamps: dict[int, int] = {}
        self._next = 2

    def set(self, field: int, value: int) -> None:
        self.values[field] = value
        self.stamps[field] = self._next
        self._next += 1

    def stamp(self, field: int) -> int:
        return self.stamps.get(field, 0)

    def get(self, field: int) -> int:
        return self.values.get(field, 0)

    def is_set(self, field: int) -> bool:
        return field in self.stamps


def _aggregate(a: int, b: int) -> int:
    return 0 if a == 0 or b == 0 else max(a, b)


def _select_fields(f: FieldSet) -> set[int]:
    """Calendar.selectFields: which date and hour fields the computation uses."""
    mask = {YEAR}
    dow = f.stamp(DAY_OF_WEEK)
    month_stamp = f.stamp(MONTH)
    dom = f.stamp(DAY_OF_MONTH)
    wom = _aggregate(f.stamp(WEEK_OF_MONTH), dow)
    dowim = _aggregate(f.stamp(DAY_OF_WEEK_IN_MONTH), dow)
    doy = f.stamp(DAY_OF_YEAR)
    woy = _aggregate(f.stamp(WEEK_OF_YEAR), dow)
    best = max(dom, wom, dowim, doy, woy)
    if best == 0:
        wom = f.stamp(WEEK_OF_MONTH)
        dowim = max(f.stamp(DAY_OF_WEEK_IN_MONTH), dow)
        woy = f.stamp(WEEK_OF_YEAR)
        best = max(wom, dowim, woy)
        if best == 0:
            best = dom = month_stamp
    if (
        best == dom
        or (best == wom and f.stamp(WEEK_OF_MONTH) >= f.stamp(WEEK_OF_YEAR))
        or (best == dowim and f.stamp(DAY_OF_WEEK_IN_MONTH) >= f.stamp(WEEK_OF_YEAR))
    ):
        mask.add(MONTH)
        if best == dom:
            mask.add(DAY_OF_MONTH)
        else:
            if dow:
                mask.add(DAY_OF_WEEK)
            if wom == dowim:
                mask.add(
                    WEEK_OF_MONTH if f.stamp(WEEK_OF_MONTH) >= f.stamp(DAY_OF_WEEK_IN_MONTH) else DAY_OF_WEEK_IN_MONTH
                )
            elif best == wom:
                mask.add(WEEK_OF_MONTH)
            elif f.stamp(DAY_OF_WEEK_IN_MONTH):
                mask.add(DAY_OF_WEEK_IN_MONTH)
    elif best == doy:
        mask.add(DAY_OF_YEAR)
    else:
        if dow:
            mask.add(DAY_OF_WEEK)
        mask.add(WEEK_OF_YEAR)
    hour_of_day = f.stamp(HOUR_OF_DAY)
    hour = _aggregate(f.stamp(HOUR), f.stamp(AM_PM))
    best = max(hour, hour_of_day)
    if best == 0:
        best = max(f.stamp(HOUR), f.stamp(AM_PM))
    if best:
        if best == hour_of_day:
            mask.add(HOUR_OF_DAY)
        else:
            mask.add(HOUR)
            if f.stamp(AM_PM):
                mask.add(AM_PM)
    return mask


def _month_length(month: int, year: int, gregorian: bool) -> int:
    return fixed_date(year + month // 12, month % 12 + 1, 1, gregorian) - fixed_date(year, month, 1, gregorian)


def _date_fixed(f: FieldSet, year: int, mask: set[int], gregorian: bool) -> int:
    """GregorianCalendar.getFixedDate for one of the two calendars (month 0-based in the fields)."""
    month = 0
    if MONTH in mask:
        year, month = year + f.get(MONTH) // 12, f.get(MONTH) % 12
    fixed = fixed_date(year, month + 1, 1, gregorian)
    if MONTH in mask:
        if DAY_OF_MONTH in mask:
            if f.is_set(DAY_OF_MONTH):
                fixed += f.get(DAY_OF_MONTH) - 1
        elif WEEK_OF_MONTH in mask:
            start = _first_week_start(fixed)
            if DAY_OF_WEEK in mask:
                start = _day_of_week_on_or_before(start + 6, f.get(DAY_OF_WEEK))
            fixed = start + 7 * (f.get(WEEK_OF_MONTH) - 1)
        else:
            dow = f.get(DAY_OF_WEEK) if DAY_OF_WEEK in mask else FIRST_DAY_OF_WEEK
            dowim = f.get(DAY_OF_WEEK_IN_MONTH) if DAY_OF_WEEK_IN_MONTH in mask else 1
            if dowim >= 0:
                fixed = _day_of_week_on_or_before(fixed + 7 * dowim - 1, dow)
            else:
                last = _month_length(month + 1, year, gregorian) + 7 * (dowim + 1)
                fixed = _day_of_week_on_or_before(fixed + last - 1, dow)
    else:
        if year == _CUTOVER_YEAR and gregorian and fixed < _CUTOVER_FIXED:
            fixed = _CUTOVER_FIXED
        if DAY_OF_YEAR in mask:
            fixed += f.get(DAY_OF_YEAR) - 1
        else:
            start = _first_week_start(fixed)
            if DAY_OF_WEEK in mask and f.get(DAY_OF_WEEK) != FIRST_DAY_OF_WEEK:
                start = _day_of_week_on_or_before(start + 6, f.get(DAY_OF_WEEK))
            fixed = start + 7 * (f.get(WEEK_OF_YEAR) - 1)
    return fixed


def resolve(f: FieldSet) -> int:
    """Epoch milliseconds of the fields (GregorianCalendar.computeTime, lenient, UTC default zone)."""
    mask = _select_fields(f)
    year = f.get(YEAR) if f.is_set(YEAR) else 1970
    if f.is_set(ERA) and f.get(ERA) == _BCE:
        year = 1 - year
    if HOUR_OF_DAY in mask:
        time_of_day = f.get(HOUR_OF_DAY)
    else:
        time_of_day = f.get(HOUR) + (12 * f.get(AM_PM) if AM_PM in mask else 0)
    time_of_day = ((time_of_day * 60 + f.get(MINUTE)) * 60 + f.get(SECOND)) * 1000 + f.get(MILLISECOND)
    days, time_of_day = divmod(time_of_day, MILLIS_PER_DAY)
    if year > _CUTOVER_YEAR:
        gfd = days + _date_fixed(f, year, mask, True)
        if gfd >= _CUTOVER_FIXED:
            return _millis(gfd, time_of_day, f)
        jfd = days + _date_fixed(f, year, mask, False)
    elif year < _CUTOVER_YEAR:
        jfd = days + _date_fixed(f, year, mask, False)
        if jfd < _CUTOVER_FIXED:
            return _millis(jfd, time_of_day, f)
        gfd = jfd
    else:
        jfd = days + _date_fixed(f, year, mask, False)
        gfd = days + _date_fixed(f, year, mask, True)
        if DAY_OF_YEAR in mask or WEEK_OF_YEAR in mask:
            return _millis(jfd, time_of_day, f)
    # the cutover gap: Java keeps the Gregorian date when both are past it, else the Julian one
    return _millis(
        gfd if (gfd >= _CUTOVER_FIXED and jfd >= _CUTOVER_FIXED) or gfd >= _CUTOVER_FIXED else jfd, time_of_day, f
    )


def _millis(fixed: int, time_of_day: int, f: FieldSet) -> int:
    millis = (fixed - _EPOCH_FIXED) * MILLIS_PER_DAY + time_of_day - f.get(ZONE_OFFSET) - f.get(DST_OFFSET)
    # Java computes in a long: absurd years wrap around
    millis &= (1 << 64) - 1
    return millis - (1 << 64) if millis >> 63 else millis


def week_date(week_year: int, week_of_year: int, dow: int) -> tuple[int, int, int]:
    """GregorianCalendar.setWeekDate's date: (normalized year, month 0-based, day of month)."""
    start = FieldSet()
    start.set(YEAR, week_year)
    start.set(WEEK_OF_YEAR, 1)
    start.set(DAY_OF_WEEK, FIRST_DAY_OF_WEEK)
    days = (dow - FIRST_DAY_OF_WEEK) % 7 + 7 * (week_of_year - 1)
    fixed = resolve(start) // MILLIS_PER_DAY + _EPOCH_FIXED + days
    year, month, day = _year_month_day(fixed, fixed >= _CUTOVER_FIXED)
    return year, month - 1, day
