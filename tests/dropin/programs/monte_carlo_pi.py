"""Monte Carlo estimates with numpy's legacy global random API."""


def run(np):
    np.random.seed(42)
    n = 20000
    x = np.random.rand(n)
    y = np.random.rand(n)
    inside = x**2 + y**2 <= 1.0
    pi_estimate = 4.0 * inside.mean()
    # Integrate exp(-z^2) over the real line by sampling a normal.
    z = np.random.randn(n)
    integral = np.sqrt(2 * np.pi) * np.mean(np.exp(-(z**2) / 2))
    dice = np.random.randint(1, 7, size=(1000, 2))
    sevens = np.mean(dice.sum(axis=1) == 7)
    picks = np.random.choice(3, size=10, p=[0.5, 0.3, 0.2])
    deck = np.arange(10)
    np.random.shuffle(deck)
    sample = np.random.normal(loc=3.0, scale=0.5, size=5)
    uniform = np.random.uniform(-1, 1, size=(2, 3))
    return {
        "pi": pi_estimate,
        "pi_error": abs(pi_estimate - np.pi),
        "gauss_integral": integral,
        "sevens": sevens,
        "picks": picks,
        "deck": deck,
        "normal": sample,
        "uniform": uniform,
        "permutation": np.random.permutation(6),
    }
