/// The country of Apple's reports (ISO 3166-1 alpha-2, `US`) for a ledger storefront (ISO 3166-1 alpha-3, `USA`,
/// Apple's `storefront`): the second map of the tie-out (docs/tie-out.md, "Storefronts and countries").
///
/// The table holds App Store Connect's 175 storefronts, each paired with its ISO 3166-1 alpha-2 code (Kosovo, which
/// ISO 3166-1 does not list, is Apple's `XKS` and the user-assigned `XK`). A storefront not in it, or none, is a named
/// unknown country (`unknown:ABC`, `unknown:none`), compared as it is and never a crash.
public enum StorefrontCountry {
    /// The country code of `storefront`: its alpha-2 code, or `unknown:<storefront>` (`unknown:none` when absent).
    public static func country(ofStorefront storefront: String?) -> String {
        guard let storefront, !storefront.isEmpty else { return unknownPrefix + "none" }
        return alpha2[storefront.uppercased()] ?? unknownPrefix + storefront
    }

    /// The prefix of a country the table does not know.
    public static let unknownPrefix = "unknown:"

    /// App Store Connect's storefronts (ISO 3166-1 alpha-3) and their alpha-2 codes.
    public static let alpha2: [String: String] = [
        "AFG": "AF",  // Afghanistan
        "AGO": "AO",  // Angola
        "AIA": "AI",  // Anguilla
        "ALB": "AL",  // Albania
        "ARE": "AE",  // United Arab Emirates
        "ARG": "AR",  // Argentina
        "ARM": "AM",  // Armenia
        "ATG": "AG",  // Antigua and Barbuda
        "AUS": "AU",  // Australia
        "AUT": "AT",  // Austria
        "AZE": "AZ",  // Azerbaijan
        "BEL": "BE",  // Belgium
        "BEN": "BJ",  // Benin
        "BFA": "BF",  // Burkina Faso
        "BGR": "BG",  // Bulgaria
        "BHR": "BH",  // Bahrain
        "BHS": "BS",  // Bahamas
        "BIH": "BA",  // Bosnia and Herzegovina
        "BLR": "BY",  // Belarus
        "BLZ": "BZ",  // Belize
        "BMU": "BM",  // Bermuda
        "BOL": "BO",  // Bolivia
        "BRA": "BR",  // Brazil
        "BRB": "BB",  // Barbados
        "BRN": "BN",  // Brunei Darussalam
        "BTN": "BT",  // Bhutan
        "BWA": "BW",  // Botswana
        "CAN": "CA",  // Canada
        "CHE": "CH",  // Switzerland
        "CHL": "CL",  // Chile
        "CHN": "CN",  // China
        "CIV": "CI",  // Côte d'Ivoire
        "CMR": "CM",  // Cameroon
        "COD": "CD",  // Congo, The Democratic Republic of the
        "COG": "CG",  // Congo
        "COL": "CO",  // Colombia
        "CPV": "CV",  // Cabo Verde
        "CRI": "CR",  // Costa Rica
        "CYM": "KY",  // Cayman Islands
        "CYP": "CY",  // Cyprus
        "CZE": "CZ",  // Czechia
        "DEU": "DE",  // Germany
        "DMA": "DM",  // Dominica
        "DNK": "DK",  // Denmark
        "DOM": "DO",  // Dominican Republic
        "DZA": "DZ",  // Algeria
        "ECU": "EC",  // Ecuador
        "EGY": "EG",  // Egypt
        "ESP": "ES",  // Spain
        "EST": "EE",  // Estonia
        "FIN": "FI",  // Finland
        "FJI": "FJ",  // Fiji
        "FRA": "FR",  // France
        "FSM": "FM",  // Micronesia, Federated States of
        "GAB": "GA",  // Gabon
        "GBR": "GB",  // United Kingdom
        "GEO": "GE",  // Georgia
        "GHA": "GH",  // Ghana
        "GMB": "GM",  // Gambia
        "GNB": "GW",  // Guinea-Bissau
        "GRC": "GR",  // Greece
        "GRD": "GD",  // Grenada
        "GTM": "GT",  // Guatemala
        "GUY": "GY",  // Guyana
        "HKG": "HK",  // Hong Kong
        "HND": "HN",  // Honduras
        "HRV": "HR",  // Croatia
        "HUN": "HU",  // Hungary
        "IDN": "ID",  // Indonesia
        "IND": "IN",  // India
        "IRL": "IE",  // Ireland
        "IRQ": "IQ",  // Iraq
        "ISL": "IS",  // Iceland
        "ISR": "IL",  // Israel
        "ITA": "IT",  // Italy
        "JAM": "JM",  // Jamaica
        "JOR": "JO",  // Jordan
        "JPN": "JP",  // Japan
        "KAZ": "KZ",  // Kazakhstan
        "KEN": "KE",  // Kenya
        "KGZ": "KG",  // Kyrgyzstan
        "KHM": "KH",  // Cambodia
        "KNA": "KN",  // Saint Kitts and Nevis
        "KOR": "KR",  // South Korea
        "KWT": "KW",  // Kuwait
        "LAO": "LA",  // Laos
        "LBN": "LB",  // Lebanon
        "LBR": "LR",  // Liberia
        "LBY": "LY",  // Libya
        "LCA": "LC",  // Saint Lucia
        "LKA": "LK",  // Sri Lanka
        "LTU": "LT",  // Lithuania
        "LUX": "LU",  // Luxembourg
        "LVA": "LV",  // Latvia
        "MAC": "MO",  // Macao
        "MAR": "MA",  // Morocco
        "MDA": "MD",  // Moldova
        "MDG": "MG",  // Madagascar
        "MDV": "MV",  // Maldives
        "MEX": "MX",  // Mexico
        "MKD": "MK",  // North Macedonia
        "MLI": "ML",  // Mali
        "MLT": "MT",  // Malta
        "MMR": "MM",  // Myanmar
        "MNE": "ME",  // Montenegro
        "MNG": "MN",  // Mongolia
        "MOZ": "MZ",  // Mozambique
        "MRT": "MR",  // Mauritania
        "MSR": "MS",  // Montserrat
        "MUS": "MU",  // Mauritius
        "MWI": "MW",  // Malawi
        "MYS": "MY",  // Malaysia
        "NAM": "NA",  // Namibia
        "NER": "NE",  // Niger
        "NGA": "NG",  // Nigeria
        "NIC": "NI",  // Nicaragua
        "NLD": "NL",  // Netherlands
        "NOR": "NO",  // Norway
        "NPL": "NP",  // Nepal
        "NRU": "NR",  // Nauru
        "NZL": "NZ",  // New Zealand
        "OMN": "OM",  // Oman
        "PAK": "PK",  // Pakistan
        "PAN": "PA",  // Panama
        "PER": "PE",  // Peru
        "PHL": "PH",  // Philippines
        "PLW": "PW",  // Palau
        "PNG": "PG",  // Papua New Guinea
        "POL": "PL",  // Poland
        "PRT": "PT",  // Portugal
        "PRY": "PY",  // Paraguay
        "QAT": "QA",  // Qatar
        "ROU": "RO",  // Romania
        "RUS": "RU",  // Russian Federation
        "RWA": "RW",  // Rwanda
        "SAU": "SA",  // Saudi Arabia
        "SEN": "SN",  // Senegal
        "SGP": "SG",  // Singapore
        "SLB": "SB",  // Solomon Islands
        "SLE": "SL",  // Sierra Leone
        "SLV": "SV",  // El Salvador
        "SRB": "RS",  // Serbia
        "STP": "ST",  // Sao Tome and Principe
        "SUR": "SR",  // Suriname
        "SVK": "SK",  // Slovakia
        "SVN": "SI",  // Slovenia
        "SWE": "SE",  // Sweden
        "SWZ": "SZ",  // Eswatini
        "SYC": "SC",  // Seychelles
        "TCA": "TC",  // Turks and Caicos Islands
        "TCD": "TD",  // Chad
        "THA": "TH",  // Thailand
        "TJK": "TJ",  // Tajikistan
        "TKM": "TM",  // Turkmenistan
        "TON": "TO",  // Tonga
        "TTO": "TT",  // Trinidad and Tobago
        "TUN": "TN",  // Tunisia
        "TUR": "TR",  // Türkiye
        "TWN": "TW",  // Taiwan
        "TZA": "TZ",  // Tanzania
        "UGA": "UG",  // Uganda
        "UKR": "UA",  // Ukraine
        "URY": "UY",  // Uruguay
        "USA": "US",  // United States
        "UZB": "UZ",  // Uzbekistan
        "VCT": "VC",  // Saint Vincent and the Grenadines
        "VEN": "VE",  // Venezuela
        "VGB": "VG",  // Virgin Islands, British
        "VNM": "VN",  // Vietnam
        "VUT": "VU",  // Vanuatu
        "XKS": "XK",  // Kosovo
        "YEM": "YE",  // Yemen
        "ZAF": "ZA",  // South Africa
        "ZMB": "ZM",  // Zambia
        "ZWE": "ZW",  // Zimbabwe
    ]
}
