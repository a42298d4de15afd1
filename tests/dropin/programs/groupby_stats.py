"""Group-by statistics: per-category counts, sums and means with unique and bincount."""


def run(np):
    rng = np.random.default_rng(6)
    categories = np.array(["pear", "apple", "fig", "apple", "kiwi", "fig", "apple", "pear"])
    categories = categories[rng.integers(0, len(categories), size=60)]
    prices = rng.uniform(0.5, 3.0, size=60).round(2)
    quantities = rng.integers(1, 10, size=60)
    names, inverse, counts = np.unique(categories, return_inverse=True, return_counts=True)
    revenue = np.bincount(inverse, weights=prices * quantities)
    price_sums = np.bincount(inverse, weights=prices, minlength=len(names) + 1)
    counts_padded = np.append(counts, 0)  # a category with no sales: no mean price
    mean_price = np.divide(
        price_sums, counts_padded, out=np.zeros_like(price_sums), where=counts_padded > 0
    )
    units = np.zeros(len(names), dtype=np.int64)
    np.add.at(units, inverse, quantities)
    # Largest single sale per group, with maximum.at.
    biggest = np.full(len(names), -np.inf)
    np.maximum.at(biggest, inverse, prices * quantities)
    best = names[np.argmax(revenue)]
    ranking = names[np.argsort(-revenue, kind="stable")]
    return {
        "names": names,
        "counts": counts,
        "revenue": revenue,
        "mean_price": mean_price,
        "units": units,
        "biggest_sale": biggest,
        "best": str(best),
        "ranking": ranking,
        "share": revenue / revenue.sum(),
    }
