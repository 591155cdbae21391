//! A tiny shop: prices, discounts, stock and coupons. Its unit tests are good but not
//! perfect, which is what `revcal demo` measures.

/// Price of `quantity` items at `unit_cents` each.
pub fn line_total(unit_cents: u64, quantity: u64) -> u64 {
    unit_cents * quantity
}

/// Sum of the line totals of `(unit_cents, quantity)` lines.
pub fn order_total(lines: &[(u64, u64)]) -> u64 {
    let mut total = 0;
    for &(unit_cents, quantity) in lines {
        total += line_total(unit_cents, quantity);
    }
    total
}

/// 10% off orders of 100.00 or more.
pub fn discounted(total_cents: u64) -> u64 {
    if total_cents >= 10_000 {
        total_cents - total_cents / 10
    } else {
        total_cents
    }
}

/// Whether `quantity` items can be taken from `stock`.
pub fn can_fulfil(stock: u64, quantity: u64) -> bool {
    quantity <= stock
}

/// Stock left after taking `quantity`, or `None` when there is not enough.
pub fn take(stock: u64, quantity: u64) -> Option<u64> {
    if !can_fulfil(stock, quantity) {
        return None;
    }
    Some(stock - quantity)
}

/// The cheapest price, or `None` for an empty list.
pub fn cheapest(prices: &[u64]) -> Option<u64> {
    let mut best = *prices.first()?;
    for &price in &prices[1..] {
        if price < best {
            best = price;
        }
    }
    Some(best)
}

/// Pages needed to show `items` with `per_page` on each page.
pub fn pages(items: usize, per_page: usize) -> usize {
    if per_page == 0 {
        return 0;
    }
    (items + per_page - 1) / per_page
}

/// A coupon code is 8 characters, each an uppercase letter or a digit.
pub fn valid_coupon(code: &str) -> bool {
    code.len() == 8 && code.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_total_multiplies() {
        assert_eq!(line_total(250, 4), 1000);
    }

    #[test]
    fn order_total_sums_every_line() {
        assert_eq!(order_total(&[(100, 2), (50, 1)]), 250);
        assert_eq!(order_total(&[]), 0);
    }

    #[test]
    fn big_orders_get_ten_percent_off() {
        assert_eq!(discounted(20_000), 18_000);
        assert_eq!(discounted(5_000), 5_000);
    }

    #[test]
    fn take_refuses_more_than_the_stock() {
        assert_eq!(take(5, 3), Some(2));
        assert_eq!(take(2, 3), None);
    }

    #[test]
    fn cheapest_finds_the_minimum() {
        assert_eq!(cheapest(&[300, 100, 200]), Some(100));
        assert_eq!(cheapest(&[]), None);
    }

    #[test]
    fn pages_round_up() {
        assert_eq!(pages(10, 5), 2);
        assert_eq!(pages(11, 5), 3);
        assert_eq!(pages(3, 0), 0);
    }

    #[test]
    fn coupons_are_uppercase_and_digits() {
        assert!(valid_coupon("SAVE2024"));
        assert!(!valid_coupon("save2024"));
    }
}
