//! Dates in UTC as the manifest writes them (`2024-05-03T12:34:56Z`) and as `--after` takes
//! them (`2024-05-03`, or with a time of day), from and to seconds since the epoch: the civil
//! calendar's arithmetic (Howard Hinnant's `days_from_civil`), so that no date crate is built
//! for two conversions.

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date of `days` since 1970-01-01: (year, month, day).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `seconds` since the epoch as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn utc_timestamp(seconds: i64) -> String {
    let (days, second_of_day) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        second_of_day / 3600,
        second_of_day / 60 % 60,
        second_of_day % 60
    )
}

/// `seconds` since the epoch as `YYYY-MM-DD`.
pub fn utc_date(seconds: i64) -> String {
    utc_timestamp(seconds)[..10].to_owned()
}

/// Today's date in UTC, `YYYY-MM-DD`.
pub fn today() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX));
    utc_date(now)
}

/// Seconds since the epoch of `text`: `YYYY-MM-DD` (midnight UTC), `YYYY-MM-DDTHH:MM:SSZ` or
/// the same with a space for the `T`. `Err` says what is expected.
pub fn parse_utc(text: &str) -> Result<i64, String> {
    let wrong = || format!("`{text}` is not a date: give YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ (UTC)");
    let number = |part: &str, low: i64, high: i64| -> Result<i64, String> {
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
            return Err(wrong());
        }
        part.parse::<i64>().ok().filter(|n| (low..=high).contains(n)).ok_or_else(wrong)
    };
    let (date, time) = match text.trim().split_once(['T', ' ']) {
        Some((date, time)) => (date, Some(time.strip_suffix('Z').ok_or_else(wrong)?)),
        None => (text.trim(), None),
    };
    let parts: Vec<&str> = date.split('-').collect();
    let [year, month, day] = parts[..] else { return Err(wrong()) };
    if year.len() != 4 || month.len() != 2 || day.len() != 2 {
        return Err(wrong());
    }
    let (year, month, day) = (number(year, 1, 9999)?, number(month, 1, 12)?, number(day, 1, 31)?);
    let days = days_from_civil(year, month, day);
    if civil_from_days(days) != (year, month, day) {
        return Err(format!("`{text}` is not a date of the calendar"));
    }
    let seconds = match time {
        None => 0,
        Some(time) => {
            let parts: Vec<&str> = time.split(':').collect();
            let [hour, minute, second] = parts[..] else { return Err(wrong()) };
            number(hour, 0, 23)? * 3600 + number(minute, 0, 59)? * 60 + number(second, 0, 59)?
        }
    };
    Ok(days * 86_400 + seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_read_back_as_the_seconds_they_came_from() {
        assert_eq!(utc_timestamp(0), "1970-01-01T00:00:00Z");
        // `date -u -d @1714739696` prints Fri May  3 12:34:56 UTC 2024.
        assert_eq!(utc_timestamp(1_714_739_696), "2024-05-03T12:34:56Z");
        assert_eq!(utc_timestamp(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc_timestamp(-1), "1969-12-31T23:59:59Z");
        for seconds in [0, 1_714_739_696, 951_782_400, 4_102_444_799, 1_577_836_800, 86_399] {
            assert_eq!(parse_utc(&utc_timestamp(seconds)), Ok(seconds), "{seconds}");
        }
        assert_eq!(parse_utc("2024-05-03"), Ok(1_714_694_400));
        assert_eq!(parse_utc("2024-05-03 12:34:56Z"), Ok(1_714_739_696));
        assert_eq!(utc_date(1_714_739_696), "2024-05-03");
        assert_eq!(today().len(), 10);
    }

    #[test]
    fn what_is_not_a_date_is_refused_with_the_form_expected() {
        for text in [
            "",
            "2024",
            "2024-5-3",
            "2024-13-01",
            "2023-02-29",
            "2024-05-03T12:34:56",
            "yesterday",
            "2024-05-03T25:00:00Z",
        ] {
            let error = parse_utc(text).unwrap_err();
            assert!(error.contains(&format!("`{text}`")), "{error}");
        }
        assert!(parse_utc("2024-02-29").is_ok(), "a leap day");
    }
}
